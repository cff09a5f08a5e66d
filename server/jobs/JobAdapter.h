#pragma once

#include "sandbox/JobResult.h"
#include "mcp/ToolResult.h"

#include <QByteArray>
#include <QObject>

#include <functional>

namespace cmcp {

class Job;
enum class JobStream;

// The one link between a call and its jail job, whichever way the job runs: it owns the job,
// hears its output and its end, and turns its result into the tool's with the maker the tool
// gave. A call's own job (ForegroundJob) and a job kept after its call (BackgroundJob) differ
// only in what they do with the output and the end.
class JobAdapter : public QObject
{
    Q_OBJECT
public:
    // The tool's result for a finished job (as its call returns it).
    using ResultMaker = std::function<ToolResult(const JobResult &)>;

protected:
    // `job` must have no parent: it becomes this object's child.
    JobAdapter(Job *job, ResultMaker makeResult);

    Job *job() const { return m_job; }
    ToolResult makeResult(const JobResult &result) const { return m_makeResult(result); }

    virtual void onOutput(JobStream stream, const QByteArray &bytes) = 0;
    virtual void onFinished(const JobResult &result) = 0;

private:
    Job *m_job;
    ResultMaker m_makeResult;
};

} // namespace cmcp
