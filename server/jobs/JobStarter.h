#pragma once

#include "jobs/BackgroundJob.h"
#include "sandbox/SandboxSupervisor.h"

#include <memory>
#include <optional>

namespace cmcp {

struct JobServices;
class ToolCall;

struct BackgroundStart
{
    JobRequest request; // complete, with the background time limit
    BackgroundJob::Description description;
    BackgroundJob::ResultMaker makeResult; // the tool's result, for job_status and yield_ms
    // nullopt: the call returns the job id at once (background). Otherwise the call waits this
    // long: a job that ends in time gives the tool's usual result, one still running its id.
    std::optional<int> yieldMs;
};

// Starts a job that outlives its call, within the session's and the server's caps, and
// finishes the call with the job's id (or, with yieldMs, possibly its result).
void startBackgroundJob(const JobServices &services, const std::shared_ptr<ToolCall> &call,
                        BackgroundStart start);

// The result of a call whose job goes on in the background.
ToolResult startedResult(const BackgroundJob &job, std::optional<int> yieldedAfterMs);

} // namespace cmcp
