#include "jobs/JobAdapter.h"

#include "sandbox/JailJob.h"

namespace cmcp {

JobAdapter::JobAdapter(JailJob *job, ResultMaker makeResult)
    : m_job(job),
      m_makeResult(std::move(makeResult))
{
    job->setParent(this);
    // Through lambdas: the overriders are not there yet while this constructor runs, but the
    // signals come later, from the event loop.
    connect(job, &JailJob::outputReceived, this,
            [this](JobStream stream, const QByteArray &bytes) { onOutput(stream, bytes); });
    connect(job, &JailJob::finished, this, [this](const JobResult &result) { onFinished(result); });
}

} // namespace cmcp
