#pragma once

#include "sandbox/JailPolicy.h"
#include "sandbox/JailReport.h"
#include "sandbox/JobResult.h"

#include <QList>

namespace cmcp {

// The refusal a job's time limit makes, naming the limit.
SandboxRefusal timeLimitRefusal(qint64 limitMs);

// The refusals of a job's seccomp filter, counted by the jail (a cold job's monitor, a
// template call's cell): one per denied syscall, and one for the calls of syscalls beyond the
// named ones (`unnamed`).
void appendSeccompRefusals(JobResult &result, const std::vector<SeccompDenial> &denials,
                           qint64 unnamed);

// After a job's end, whichever way it ran: the refusals its limits made, appended to
// result.sandboxRefusals, so that a bare "Killed" or "Disk quota exceeded" in its output can be
// told apart. The memory limit when result.oomKilled, the pids limit when forks were refused
// (`pidsRefused`), and the workspace's quota when the job failed with its workspace full (which
// also sets result.workspaceQuotaBytes).
void appendLimitRefusals(JobResult &result, const JailPolicy &policy, qint64 pidsRefused);

} // namespace cmcp
