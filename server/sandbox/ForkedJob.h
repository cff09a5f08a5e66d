#pragma once

#include "jail/protocol/CellProtocol.h"
#include "posix/UniqueFd.h"
#include "sandbox/JailJob.h"
#include "sandbox/Job.h"
#include "sandbox/OutputCapture.h"
#include "sandbox/UidPool.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>

#include <memory>
#include <optional>

class QSocketNotifier;

namespace cmcp {

class TemplateCell;

// A call's job forked from a template's cell (jail/template.h): no jail is built and
// no program started; the cell forks the call from its interpreter with the call's own uid,
// user and IPC namespaces, Landlock domain and seccomp filter, and answers how it ended with
// the accounting of the cell's cgroup. The request's standardInput is the payload the cell's
// program reads (the command, or the nonce and the code); the job's own standard input is
// /dev/null. At the time limit or a cancel the cell kills the call; a cell that does not
// answer then is reported (cellUnresponsive) for its template to kill.
class ForkedJob : public Job
{
    Q_OBJECT
public:
    ForkedJob(JobSpec spec, TemplateCell *cell, QObject *parent = nullptr);
    ~ForkedJob() override;

    void setUidLease(UidLease lease);
    void setWorkspaceHold(std::shared_ptr<const void> hold) override;
    void start() override;
    void cancel() override;
    bool isRunning() const override { return m_running; }
    QString workspace() const override { return QString::fromStdString(m_spec.policy.workspace); }

    // After a kill, how long the cell has to say the call ended.
    static constexpr int kKillAnswerMs = 3000;

Q_SIGNALS:
    // The cell did not answer a kill: only its template can end it now.
    void cellUnresponsive(quint32 cell);

private:
    struct Stream
    {
        UniqueFd fd;
        QSocketNotifier *notifier = nullptr;
    };

    bool openStream(Stream &stream, UniqueFd &writeEnd, void (ForkedJob::*read)(), QString *error);
    void readStandardOutput();
    void readStandardError();
    void readOutput(JobStream which);
    void readChannel();
    void closeStream(Stream &stream);
    void stop();
    void onRefused(int code, const QString &layer, const QString &message);
    void onEnded(const cell_protocol::CallEnd &end);
    void onCellGone();
    void finishIfDone();
    void finish(JobResult result);
    JobResult collectResult() const;

    const JobSpec m_spec;
    QPointer<TemplateCell> m_cell;
    const bool m_workspaceIdmapped; // the call sees its workspace as its own user's
    UidLease m_lease;
    std::shared_ptr<const void> m_workspaceHold;
    std::unique_ptr<OutputCapture> m_stdout;
    std::unique_ptr<OutputCapture> m_stderr;
    Stream m_out, m_err, m_channel;
    QByteArray m_channelBytes;
    bool m_channelOverflowed = false;
    std::optional<cell_protocol::CallEnd> m_end;
    std::optional<JobRefusal> m_refusal;
    std::vector<SeccompDenial> m_denials;
    qint64 m_deniedUnnamed = 0;
    QString m_error; // the cell went away or could not take the call
    QTimer m_timeoutTimer;
    QTimer m_killTimer;
    QElapsedTimer m_clock;
    qint64 m_wallMs = 0;
    bool m_started = false;
    bool m_running = false;
    bool m_stopping = false;
    bool m_timedOut = false;
    bool m_cancelled = false;
    bool m_unresponsive = false; // processes of the call may have survived: its uid is retired
};

} // namespace cmcp
