#pragma once

#include "sandbox/JailReport.h"
#include "sandbox/Job.h"
#include "sandbox/JobEgress.h"
#include "sandbox/JobResult.h"
#include "sandbox/OutputCapture.h"
#include "sandbox/UidPool.h"
#include "sandbox/WorkspaceIdmap.h"
#include "posix/UniqueFd.h"
#include "sandbox/JobRequest.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <memory>
#include <optional>

class QSocketNotifier;

namespace cmcp {

// Everything one job needs: the request, with its policy complete (uid and gid set), and the
// supervisor's bounds. The request's workspaceHold is not kept here: setWorkspaceHold() takes it,
// so that it goes with the uid lease and not with this object.
struct JobSpec : JobRequest
{
    QString jailProgram; // path of cmcp-jail
    qint64 outputCapBytes = 256 * 1024; // per stream
    QString spillDirectory; // where overflowing output is kept; empty: nowhere
    bool insecure = false; // copied into the result (SANDBOX_INSECURE)
    // Serves the job's egress listener when its policy has one (namespaces.egress_port).
    std::shared_ptr<JobEgress> egress;
    // The uid pool a template maps (serveTemplate).
    uid_t poolFirst = 0;
    uid_t poolCount = 0;
    // Shows the workspace to the job as its own user's; null: the job sees it as it is on disk.
    std::shared_ptr<WorkspaceIdmap> workspaceIdmap;
};

// One job under cmcp-jail, run asynchronously: the policy goes to the jail on a pipe, its
// report comes back on a second pipe, output is captured within a cap as it arrives. On
// timeout or cancel() the jail gets SIGTERM (it kills the whole job and still reports), and
// SIGKILL if it is still there after a short grace. When the jail is gone, every process left
// with the job's uid is killed (UidReaper), then the uid lease and the workspace hold are
// released and finished() is emitted, once.
class JailJob : public Job
{
    Q_OBJECT

public:
    explicit JailJob(JobSpec spec, QObject *parent = nullptr);
    // A job still running is killed (SIGKILL, bounded wait) and reaped, without a result.
    ~JailJob() override;

    // The uid the job runs as comes from this lease; it goes back to its pool when the job
    // has ended and its processes are gone.
    void setUidLease(UidLease lease);
    // The job's uid now counts against `principal` (a job started ahead, taken by its call).
    void passUidTo(const QString &principal) { m_lease.passTo(principal); }
    // Released with the uid lease, once every process of the uid has ended.
    void setWorkspaceHold(std::shared_ptr<const void> hold) override;

    // A unique name; also the stem of the spill files.
    QString id() const { return m_id; }
    void start() override;
    // For a job started with awaitInput: writes its whole standard input, closes it, and starts
    // the time limit (timeoutMs, 0: none) from now. The result's wall_ms then counts from here
    // too. No effect otherwise, or a second time.
    void provideInput(const QByteArray &input, int timeoutMs);
    // For a job started with interactiveInput: writes bytes to its standard input, which stays
    // open. False when the job is not interactive or not running.
    bool writeInput(const QByteArray &bytes);
    // Closes an interactive job's standard input (the program reads end of file).
    void closeInput();
    void cancel() override;
    bool isRunning() const override { return m_running; }
    QString workspace() const override { return QString::fromStdString(m_spec.policy.workspace); }
    // The host pid of the job's first process once the jail reported it started; 0 before.
    qint64 jobPid() const { return m_report.started() ? m_report.started()->pid : 0; }

    // SIGTERM to SIGKILL.
    static constexpr int kKillGraceMs = 500;
    static constexpr const char *kResultChannelVariable = "CMCP_RESULT_FD";
    static constexpr qint64 kResultChannelCapBytes = 8 * 1024 * 1024;
    // Bytes read from a job's result channel, kept up to kResultChannelCapBytes: beyond, they
    // are dropped and `overflowed` is set.
    static void keepChannelBytes(QByteArray &channel, bool &overflowed, const char *data,
                                 std::size_t size);
    // Refusals a result lists; beyond, only their number.
    static constexpr qsizetype kMaxListedRefusals = 32;

Q_SIGNALS:
    // The jail reported the job started (for a template: it takes its daemon's connection).
    void jailStarted();

private:
    // The pipe ends cmcp-jail inherits, held by the daemon until the jail has started.
    struct JailEnds
    {
        UniqueFd policy; // the read end, with the whole policy in the pipe
        UniqueFd reportWrite;
        UniqueFd channelWrite; // invalid without a result channel
        UniqueFd egress; // the jail's end of the egress channel; invalid without one
        UniqueFd workspaceView; // the workspace as the job's own; invalid: bound as on disk
    };

    void createOutputCaptures();
    std::optional<JailEnds> openPipes(QString *error);
    QSocketNotifier *watchReadEnd(int fd, void (JailJob::*read)());
    void launchJail(const JailEnds &ends);
    void giveStandardInput();
    void stop();
    void readOutput(JobStream stream);
    void readReport();
    void readChannel();
    void readEgress();
    void closeEgress();
    void noteRefusal(SandboxRefusal refusal);
    void onProcessFinished(int exitCode, QProcess::ExitStatus status);
    void onProcessError(QProcess::ProcessError error);
    void finishWithError(const QString &error);
    JobResult collectResult(int exitCode, QProcess::ExitStatus status);
    void reapLeftovers();
    void closeReportPipe();
    void closeChannelPipe();

    const JobSpec m_spec;
    const QString m_id;
    UidLease m_lease;
    std::shared_ptr<const void> m_workspaceHold;
    QProcess *m_process = nullptr;
    std::unique_ptr<OutputCapture> m_stdout;
    std::unique_ptr<OutputCapture> m_stderr;
    JailReport m_report;
    UniqueFd m_reportFd;
    QSocketNotifier *m_reportNotifier = nullptr;
    UniqueFd m_channelFd;
    QSocketNotifier *m_channelNotifier = nullptr;
    bool m_workspaceIdmapped = false; // the job sees its workspace as its own user's
    UniqueFd m_egressFd; // the daemon's end of the egress channel, until the listener came
    QSocketNotifier *m_egressNotifier = nullptr;
    QObject *m_egressServer = nullptr; // serves the job's listener while the job runs
    QList<SandboxRefusal> m_refusals;
    qsizetype m_refusalsLeftOut = 0;
    QByteArray m_channel;
    bool m_channelOverflowed = false;
    QTimer m_timeoutTimer;
    QTimer m_killTimer;
    QElapsedTimer m_clock;
    qint64 m_waitedMs = 0; // how long an awaitInput job waited for its input
    bool m_inputProvided = false;
    bool m_started = false;
    bool m_running = false;
    bool m_stopping = false;
    bool m_timedOut = false;
    bool m_cancelled = false;
    bool m_startReported = false;
    QString m_reapError;
};

} // namespace cmcp
