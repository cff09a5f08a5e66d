#include "jobs/ForegroundJob.h"

#include "sandbox/JailJob.h"
#include "mcp/ToolCall.h"

namespace cmcp {

void ForegroundJob::start(const std::shared_ptr<ToolCall> &call, Job *job, ResultMaker makeResult)
{
    new ForegroundJob(call, job, std::move(makeResult));
    job->start();
    // Cancelled before the job existed: the signal has passed, so stop the job now.
    if (call->isCancelled())
        job->cancel();
}

void ForegroundJob::adopt(const std::shared_ptr<ToolCall> &call, JailJob *job,
                          ResultMaker makeResult, const QByteArray &input, int timeoutMs)
{
    new ForegroundJob(call, job, std::move(makeResult));
    job->provideInput(input, timeoutMs);
    if (call->isCancelled())
        job->cancel();
}

ForegroundJob::ForegroundJob(const std::shared_ptr<ToolCall> &call, Job *job,
                             ResultMaker makeResult)
    : JobAdapter(job, std::move(makeResult)),
      m_call(call)
{
    m_progressTimer.setSingleShot(true);
    m_progressTimer.setInterval(kProgressIntervalMs);
    connect(&m_progressTimer, &QTimer::timeout, this, [this] { flushProgress(false); });
    m_heartbeatTimer.setInterval(kHeartbeatMs);
    connect(&m_heartbeatTimer, &QTimer::timeout, this, [this] {
        sendProgress(QStringLiteral("running for %1 s").arg(m_clock.elapsed() / 1000));
    });
    m_heartbeatTimer.start();
    m_clock.start();
    // The job dies with the call: the jail kills its whole tree and still reports.
    connect(call.get(), &ToolCall::cancelled, job, &Job::cancel);
}

void ForegroundJob::onOutput(JobStream, const QByteArray &bytes)
{
    m_call->reportOutput(bytes.size());
    // Capped: a flood of output costs little here, whether or not the client wants progress.
    if (m_pending.size() < kProgressMessageCap)
        m_pending.append(bytes.left(kProgressMessageCap - m_pending.size()));
    if (!m_progressTimer.isActive())
        m_progressTimer.start();
}

// Sends the complete lines gathered so far (`all`: the partial last line too), as one message.
void ForegroundJob::flushProgress(bool all)
{
    const qsizetype end = all || m_pending.size() >= kProgressMessageCap
            ? m_pending.size()
            : m_pending.lastIndexOf('\n') + 1;
    if (end <= 0)
        return;
    QByteArray lines = m_pending.left(end);
    m_pending.remove(0, end);
    if (lines.endsWith('\n'))
        lines.chop(1);
    sendProgress(QString::fromUtf8(lines));
}

// The progress value counts notifications, so it grows with each one as the specification
// requires; the message carries the output. Any notification restarts the heartbeat.
void ForegroundJob::sendProgress(const QString &message)
{
    m_call->reportProgress(double(++m_notifications), std::nullopt, message);
    m_heartbeatTimer.start();
}

void ForegroundJob::onFinished(const JobResult &result)
{
    m_progressTimer.stop();
    m_heartbeatTimer.stop();
    flushProgress(true);
    m_call->finish(makeResult(result));
    deleteLater();
}

} // namespace cmcp
