#pragma once

#include "sandbox/JailPolicy.h"
#include "sandbox/JobResult.h"

namespace cmcp {

// The refusal a job's time limit makes, naming the limit.
SandboxRefusal timeLimitRefusal(qint64 limitMs);

// After a job's end, whichever way it ran: the refusals its limits made, appended to
// result.sandboxRefusals, so that a bare "Killed" or "Disk quota exceeded" in its output can be
// told apart. The memory limit when result.oomKilled, the pids limit when forks were refused
// (`pidsRefused`), and the workspace's quota when the job failed with its workspace full (which
// also sets result.workspaceQuotaBytes).
void appendLimitRefusals(JobResult &result, const JailPolicy &policy, qint64 pidsRefused);

} // namespace cmcp
