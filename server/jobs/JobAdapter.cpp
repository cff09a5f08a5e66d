#include "jobs/JobAdapter.h"

#include "sandbox/Job.h"

namespace cmcp {

JobAdapter::JobAdapter(Job *job, ResultMaker makeResult)
    : m_job(job),
      m_makeResult(std::move(makeResult))
{
    job->setParent(this);
    // Through lambdas: the overriders are not there yet while this constructor runs, but the
    // signals come later, from the event loop.
    connect(job, &Job::outputReceived, this,
            [this](JobStream stream, const QByteArray &bytes) { onOutput(stream, bytes); });
    connect(job, &Job::finished, this, [this](const JobResult &result) { onFinished(result); });
}

} // namespace cmcp
