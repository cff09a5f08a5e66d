#include "JobCallBridge.h"

#include "JailJob.h"
#include "ToolCall.h"

namespace cmcp {

void JobCallBridge::start(const std::shared_ptr<ToolCall> &call, JailJob *job,
                          ResultMaker makeResult)
{
    new JobCallBridge(call, job, std::move(makeResult));
    job->start();
    // Cancelled before the job existed: the signal has passed, so stop the job now.
    if (call->isCancelled())
        job->cancel();
}

JobCallBridge::JobCallBridge(const std::shared_ptr<ToolCall> &call, JailJob *job,
                             ResultMaker makeResult)
    : m_call(call),
      m_job(job),
      m_makeResult(std::move(makeResult))
{
    job->setParent(this);
    m_progressTimer.setSingleShot(true);
    m_progressTimer.setInterval(kProgressIntervalMs);
    connect(&m_progressTimer, &QTimer::timeout, this, [this] { flushProgress(false); });
    connect(job, &JailJob::outputReceived, this, &JobCallBridge::onOutput);
    connect(job, &JailJob::finished, this, &JobCallBridge::onFinished);
    // The job dies with the call: the jail kills its whole tree and still reports.
    connect(call.get(), &ToolCall::cancelled, job, &JailJob::cancel);
}

void JobCallBridge::onOutput(JobStream, const QByteArray &bytes)
{
    // Without a progressToken ToolCall drops the notifications; keeping no copy then matters
    // for floods of output.
    if (m_pending.size() < kProgressMessageCap)
        m_pending.append(bytes.left(kProgressMessageCap - m_pending.size()));
    if (!m_progressTimer.isActive())
        m_progressTimer.start();
}

// Sends the complete lines gathered so far (`all`: the partial last line too), as one message.
void JobCallBridge::flushProgress(bool all)
{
    const qsizetype end = all || m_pending.size() >= kProgressMessageCap
            ? m_pending.size()
            : m_pending.lastIndexOf('\n') + 1;
    if (end <= 0)
        return;
    QByteArray lines = m_pending.left(end);
    m_pending.remove(0, end);
    m_bytesSent += end; // the progress value: it grows with every notification
    if (lines.endsWith('\n'))
        lines.chop(1);
    m_call->reportProgress(double(m_bytesSent), std::nullopt, QString::fromUtf8(lines));
}

void JobCallBridge::onFinished(const JobResult &result)
{
    m_progressTimer.stop();
    flushProgress(true);
    m_call->finish(m_makeResult(result));
    deleteLater();
}

} // namespace cmcp
