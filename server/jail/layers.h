// One function per layer, one source file per layer. Each returns false with a one-line
// description of what failed (errno text included) in `error`; main.cpp turns that into
//   cmcp-jail: <layer>: <error>
// on stderr and the layer's exit status (exit_codes.h), before the job's code ever runs.
#pragma once

#include "policy.h"

#include <linux/filter.h>

#include <string>
#include <vector>

namespace cmcp::jail {

// Facts about the jail's own start, captured before any layer runs.
struct Launch
{
    pid_t parentPid = 0; // getppid() at start: the supervisor that must outlive the job
    int keepFd = -1; // --report-fd, kept open (CLOEXEC) across the descriptor sweep
};

// rlimits.cpp: RLIMIT_CORE 0 always, then the policy's limits. Runs while still privileged.
bool applyRlimits(const Policy &policy, std::string &error);

// identity.cpp: securebits, bounding/ambient/inheritable capabilities dropped, no
// supplementary groups, setresgid/setresuid to the policy ids, no_new_privs, verification
// (/proc/self/status and setuid(0) must fail), new session, parent-death signal, and every
// descriptor above 2 closed.
bool applyIdentity(const Policy &policy, const Launch &launch, std::string &error);

// landlock.cpp: the policy's "landlock" object as a Landlock domain, sized by the kernel's
// ABI; sets no_new_privs itself. Fails when the kernel has no Landlock.
bool applyLandlock(const Policy &policy, std::string &error);
// The Landlock ABI the kernel reports, or -errno (ENOSYS/EOPNOTSUPP: no Landlock).
int landlockAbi();

// seccomp.cpp: buildSeccomp compiles the policy's filter (seccomp_filter.h) while the jail may
// still allocate; applySeccomp loads it with prctl only (no_new_privs must be set), as the last
// step before execve.
struct SeccompProgram
{
    std::vector<sock_filter> code;
};
bool buildSeccomp(const Policy &policy, SeccompProgram &out, std::string &error);
bool applySeccomp(const SeccompProgram &program, std::string &error);

// exec.cpp: chdir into workspace/cwd (beneath the workspace, as the job's uid), resolve the
// program through the policy's PATH, execve with exactly the policy environment.
// Returns only on failure.
bool execJob(const Policy &policy, char *const argv[], std::string &error);

// Shared helper: "<what>: <strerror(err)>".
std::string errnoText(const std::string &what, int err);

} // namespace cmcp::jail
