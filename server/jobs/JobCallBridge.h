#pragma once

#include "JobResult.h"
#include "ToolResult.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>

namespace cmcp {

class JailJob;
class ToolCall;
enum class JobStream;

// Ties one running job to the tools/call that asked for it: the job's output goes to the client
// as progress notifications (line by line, at most one notification per kProgressIntervalMs,
// when the client passed a progressToken), a job silent for kHeartbeatMs sends a notification
// anyway (so that clients which reset their request timeout on progress wait for long jobs, and
// the response stream carries traffic), a cancelled call (notifications/cancelled, the
// session ending) kills the job, and the finished job's result finishes the call. It owns the
// job and deletes itself, with the job, once the job has finished.
class JobCallBridge : public QObject
{
    Q_OBJECT
public:
    using ResultMaker = std::function<ToolResult(const JobResult &)>;

    // Starts the job; `job` must have been created with a null parent.
    static void start(const std::shared_ptr<ToolCall> &call, JailJob *job, ResultMaker makeResult);
    // For a job started ahead of the call (WarmJobPool): hands it its input and time limit.
    static void adopt(const std::shared_ptr<ToolCall> &call, JailJob *job, ResultMaker makeResult,
                      const QByteArray &input, int timeoutMs);

    static constexpr int kProgressIntervalMs = 50;
    static constexpr int kHeartbeatMs = 10000;
    // Larger bursts are cut in a notification; the whole output is still in the result.
    static constexpr qsizetype kProgressMessageCap = 16 * 1024;

private:
    JobCallBridge(const std::shared_ptr<ToolCall> &call, JailJob *job, ResultMaker makeResult);

    void onOutput(JobStream stream, const QByteArray &bytes);
    void flushProgress(bool all);
    void sendProgress(const QString &message);
    void onFinished(const JobResult &result);

    std::shared_ptr<ToolCall> m_call;
    JailJob *m_job;
    ResultMaker m_makeResult;
    QByteArray m_pending; // complete lines not sent yet, and a partial last line
    qint64 m_notifications = 0;
    QTimer m_progressTimer;
    QTimer m_heartbeatTimer;
    QElapsedTimer m_clock;
};

} // namespace cmcp
