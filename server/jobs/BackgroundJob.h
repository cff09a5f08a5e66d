#pragma once

#include "jobs/JobOutputLog.h"
#include "sandbox/JobResult.h"
#include "mcp/ToolResult.h"
#include "jobs/JobAdapter.h"
#include "sandbox/JailJob.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonObject>

#include <memory>
#include <optional>

namespace cmcp {

// One job started by system_run_command or system_run_python with background (or yield_ms)
// and kept after its call: it owns the jail job and its output log, and once the job has ended
// it keeps the result for job_status.
class BackgroundJob : public JobAdapter
{
    Q_OBJECT
public:
    struct Description
    {
        QString tool; // the tool that started it
        QString summary; // the command or the code's first line, shortened
        bool interactive = false;
        int timeoutSeconds = 0;
        QString principal; // the name of the principal whose call started it
    };

    // `job` must not be started yet and have no parent.
    BackgroundJob(QString id, QString sessionId, Description description, JailJob *job,
                  std::unique_ptr<JobOutputLog> log, ResultMaker makeResult);
    ~BackgroundJob() override;

    void start();
    const QString &id() const { return m_id; }
    // Empty while the job is detached: its session ended and JOB_KEEP_SECONDS keeps it for
    // job_attach.
    const QString &sessionId() const { return m_sessionId; }
    void setSessionId(const QString &sessionId) { m_sessionId = sessionId; }
    const Description &description() const { return m_description; }
    bool isRunning() const { return !m_result.has_value(); }
    const std::optional<JobResult> &result() const { return m_result; }
    // The tool's own result for the finished job (as the call would have returned it).
    ToolResult toolResult() const;
    const JobOutputLog &output() const { return *m_log; }
    // The host pid of the job's first process while it runs (its network namespace is the
    // job's); 0 before it started and once it has ended.
    qint64 jobPid() const { return isRunning() ? m_jailJob->jobPid() : 0; }

    // False with a reason when the job is not interactive or has ended.
    bool writeInput(const QByteArray &bytes, bool closeAfter, QString *error);
    void kill();

    // {job_id, tool, summary, interactive, state, started_at, elapsed_ms, output_bytes,
    //  output_dropped_bytes, timeout_seconds} and, once ended, the tool's result without its
    // output (read it with job_output) as "result".
    QJsonObject status() const;

Q_SIGNALS:
    void finished(const QString &id);

private:
    void onOutput(JobStream stream, const QByteArray &bytes) override;
    void onFinished(const JobResult &result) override;
    QString state() const;

    JailJob *const m_jailJob; // job(), with the standard input an interactive job is fed
    const QString m_id;
    QString m_sessionId;
    const Description m_description;
    std::unique_ptr<JobOutputLog> m_log;
    std::optional<JobResult> m_result;
    bool m_killed = false;
    QDateTime m_startedAt;
    QElapsedTimer m_clock;
    qint64 m_elapsedAtEndMs = 0;
};

} // namespace cmcp
