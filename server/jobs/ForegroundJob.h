#pragma once

#include "sandbox/JobResult.h"
#include "mcp/ToolResult.h"
#include "jobs/JobAdapter.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QTimer>

#include <memory>

namespace cmcp {

class JailJob;
class ToolCall;

// A call's own job, tied to the call that asked for it: the job's output goes to the client
// as progress notifications (line by line, at most one notification per kProgressIntervalMs,
// when the client passed a progressToken), a job silent for kHeartbeatMs sends a notification
// anyway (so that clients which reset their request timeout on progress wait for long jobs, and
// the response stream carries traffic), a cancelled call (notifications/cancelled, the
// session ending) kills the job, and the finished job's result finishes the call. It owns the
// job and deletes itself, with the job, once the job has finished.
class ForegroundJob : public JobAdapter
{
    Q_OBJECT
public:
    // Starts the job; `job` must have been created with a null parent.
    static void start(const std::shared_ptr<ToolCall> &call, Job *job, ResultMaker makeResult);
    // For a job started ahead of the call (WarmJobPool): hands it its input and time limit.
    static void adopt(const std::shared_ptr<ToolCall> &call, JailJob *job, ResultMaker makeResult,
                      const QByteArray &input, int timeoutMs);

    static constexpr int kProgressIntervalMs = 50;
    static constexpr int kHeartbeatMs = 10000;
    // Larger bursts are cut in a notification; the whole output is still in the result.
    static constexpr qsizetype kProgressMessageCap = 16 * 1024;

private:
    ForegroundJob(const std::shared_ptr<ToolCall> &call, Job *job, ResultMaker makeResult);

    void onOutput(JobStream stream, const QByteArray &bytes) override;
    void onFinished(const JobResult &result) override;
    void flushProgress(bool all);
    void sendProgress(const QString &message);

    std::shared_ptr<ToolCall> m_call;
    QByteArray m_pending; // complete lines not sent yet, and a partial last line
    qint64 m_notifications = 0;
    QTimer m_progressTimer;
    QTimer m_heartbeatTimer;
    QElapsedTimer m_clock;
};

} // namespace cmcp
