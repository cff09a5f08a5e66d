// One function per layer, one source file per layer. Each returns false with a one-line
// description of what failed (errno text included) in `error`; main.cpp turns that into
//   cmcp-jail: <layer>: <error>
// on stderr and the layer's exit status (exit_codes.h), before the job's code ever runs.
#pragma once

#include "jail/protocol/Policy.h"

#include <linux/filter.h>

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cmcp::jail {

// Facts about the jail's own start, captured before any layer runs.
struct Launch
{
    // Read end of a pipe whose write end only the monitor holds: it reports end-of-file once
    // the monitor is gone, which is how the job process checks, after setting its parent-death
    // signal, that the monitor did not die before (inside a pid namespace getppid() is 0).
    int monitorAliveFd = -1;
    // --pass-fd: a descriptor of the supervisor's the job keeps, at the same number (e.g. the
    // channel a job runner reports a result on); -1 for none. Everything else above 2 closes.
    int passFd = -1;
    // --egress-fd: the Unix socket the job process hands its egress listener over (see
    // NamespacesPolicy::egressPort); -1 for none.
    int egressFd = -1;
    // The workspace, held by an O_PATH descriptor in the job's own mount namespace from before
    // the identity switch (see holdWorkspace), so that no layer has to reach it by its host
    // path as the job's uid: a SANDBOX_ROOT below a directory the pool uids cannot search
    // (/root, a 0700 mktemp directory) still works. -1 when the monitor could not open it;
    // `workspaceErrno` then says why, and the first layer that needs it fails with that.
    int workspaceFd = -1;
    int workspaceErrno = 0;
    // Without the minimal root (or with namespaces.program_from_host), a program given by its
    // absolute path is held the same way
    // (holdProgram) and executed through the descriptor: a program below a directory the job's
    // uid cannot search (the browser worker of a clone in /root) still starts. With the minimal
    // root the program is the one inside it, resolved there. -1: executed by its path.
    int programFd = -1;
    // User namespaces the job may make below its own (max_user_namespaces there): none for a
    // job; a template makes one per call (template.h).
    unsigned nestedUserNamespaces = 0;
    // --workspace-view-fd: a detached idmapped mount of the workspace the supervisor made for
    // this job, in which the workspace's owner on disk shows as the job's uid (so as uid 1000
    // inside). The minimal root attaches it at workspace_at instead of binding workspaceFd.
    // -1: the workspace is bound as it is on disk.
    int workspaceViewFd = -1;
};

// workspace.cpp, around the clone. enterWorkspace runs in the monitor, still privileged, just
// before it clones the job: it opens the policy's workspace and makes it the monitor's working
// directory, which the clone carries into the job's new mount namespace (a descriptor opened
// there would name a mount of the host's namespace, which the job could not bind); it returns
// 0 or the errno of the failure. The monitor leaves the directory again right after the clone.
// holdWorkspace runs first in the job: launch.workspaceFd becomes an O_PATH descriptor of that
// working directory. workspaceError: "workspace <host path>: <reason>" for a failed open.
int enterWorkspace(const Policy &policy);
void holdWorkspace(Launch &launch);
std::string workspaceError(const Policy &policy, const Launch &launch);

// cgroup.cpp, run by the monitor (privileged, outside the job's namespaces). One cgroup per
// job, "cmcp/<name>" beneath each hierarchy's root, in every writable hierarchy with a
// controller the policy needs: v1 memory and cpuacct (accounting) always, pids and cpu for
// their limits, on legacy/hybrid hosts; the v2 tree (pure, or /sys/fs/cgroup/unified on hybrid
// hosts) always, for cgroup.kill and for the v2 controllers it has (enabled as needed in the
// root's and cmcp's cgroup.subtree_control).
struct JobCgroup
{
    // The job's directory in each hierarchy used; the shared "cmcp" parents are not listed
    // (they stay for other jobs).
    std::vector<std::string> dirs;
};
struct CgroupStats
{
    std::optional<std::uint64_t> cpuNanoseconds; // the whole job tree
    std::optional<std::uint64_t> peakMemoryBytes;
    bool oomKilled = false; // the OOM killer killed at least one task of the job
    std::uint64_t pidsRefused = 0; // forks the pids limit refused (pids.events "max")
};
// Creates the job's cgroups (name: the policy's, default "job-<jailPid>"; an empty leftover of
// that name is replaced) and writes the policy's limits. Fails when a limit the policy asks for
// has no writable controller (fail closed, never skip), or when no hierarchy at all is
// writable; a failure leaves no directory behind and `out` empty.
bool createCgroup(const Policy &policy, pid_t jailPid, JobCgroup &out, std::string &error);
// Moves `pid` (the job, not yet running user code) into every one of the job's cgroups.
bool enterCgroup(const JobCgroup &cgroup, pid_t pid, std::string &error);
// SIGKILL to every task of the job: cgroup.kill (v2) where present, which returns at once (the
// tasks die asynchronously), else each listed pid, again until the lists are empty (at most
// ~100 rounds).
void killCgroup(const JobCgroup &cgroup);
// Whether any task is listed in one of the job's cgroups (true when a list cannot be read).
// Reads only: unlike cgroup.kill it does not wait for cgroup_mutex, which a task migration
// elsewhere on the machine may hold through an RCU grace period.
bool cgroupHoldsTasks(const JobCgroup &cgroup);
// Read before removeCgroup: the counters go with the directories.
CgroupStats cgroupStats(const JobCgroup &cgroup);
// Removes the job's cgroups once empty, retrying for up to ~200 ms while the kernel finishes
// the killed tasks; a directory still busy after that stays (kill and reap first).
void removeCgroup(const JobCgroup &cgroup);

// namespaces.cpp. The monitor clones the job with cloneFlags(policy) and writes its id maps
// (job uid/gid kInsideId = the policy's host uid/gid); the job then builds and enters its
// minimal root (after switchIdentity, with the capabilities it holds in its own user
// namespace): /usr read-only, /lib* links, a curated /etc, a minimal /dev, a fresh /proc, a
// size-capped /tmp, the workspace at workspace_at, pivot_root, loopback up, hostname.
int cloneFlags(const Policy &policy);
bool writeIdMaps(const Policy &policy, pid_t pid, std::string &error);
bool enterMinimalRoot(const Policy &policy, const Launch &launch, std::string &error);
// A cgroup namespace rooted at the cgroup the process is in: called once the monitor has placed
// it (awaitPlacement), so that /proc/self/cgroup reads "/" and names no cgroup of the host.
bool enterCgroupNamespace(std::string &error);
// egress.cpp, in the job process inside its network namespace (loopback up): listens on
// 127.0.0.1:egress_port, sends the listening socket over launch.egressFd and closes both, so
// that the job itself holds neither.
bool handOverEgressListener(const Policy &policy, const Launch &launch, std::string &error);
// writeIdMap: uid_map "insideUid outsideUid uidCount" and gid_map "insideGid outsideGid 1" of
// process `pid`.
bool writeIdMap(pid_t pid, uid_t insideUid, uid_t outsideUid, uid_t uidCount, gid_t insideGid,
                gid_t outsideGid, std::string &error);
// At most `count` user namespaces below the caller's own (0: none), through the procfs mounted
// at `proc`. The owner of a user namespace may set it; a job sets 0 for its own, and has no
// capability left afterwards to raise it (seccomp refuses the syscalls too).
bool limitNestedUserNamespaces(const std::string &proc, unsigned count, std::string &error);
// Attaches the detached mount `viewFd` (Launch::workspaceViewFd) at `target`: the caller needs
// CAP_SYS_ADMIN over its mount namespace only, not over the file system.
bool attachWorkspaceView(int viewFd, const std::string &target, std::string &error);
// For a template's cell (template.h), in its new mount, pid (and network) namespaces below the
// template's minimal root: a fresh /proc of its own pid namespace that shows each process to
// its own uid only, a fresh /tmp (tmp_size_mb) and /dev/shm, loopback up without network.
bool enterCellNamespaces(const Policy &policy, std::string &error);

// apparmor.cpp: aa_change_onexec to the policy's profile (before no_new_privs is set).
// apparmor_now.cpp: the switch at once, for a call of a template, which runs without an exec.
bool applyApparmor(const Policy &policy, std::string &error);
bool changeApparmorProfile(const Policy &policy, std::string &error);

// rlimits.cpp: RLIMIT_CORE 0 always, then the policy's limits. Runs while still privileged.
bool applyRlimits(const Policy &policy, std::string &error);

// identity.cpp, in two steps around the mount work:
// switchIdentity: securebits, bounding/ambient capabilities dropped, no supplementary groups,
//   setresgid/setresuid to the job's ids (the policy's host ids; kInsideId inside a user
//   namespace, which maps it to them), the parent-death signal re-set (credential changes clear
//   it) and the monitor checked alive. Inside a user namespace the job keeps its capabilities
//   over that namespace for the mount work; otherwise it has none left.
// sealIdentity: permitted/effective/inheritable capabilities zeroed, no_new_privs, verification
//   (/proc/self/status and setuid(0) must fail), a new session, every descriptor above 2 marked
//   close-on-exec.
bool switchIdentity(const Policy &policy, const Launch &launch, std::string &error);
bool sealIdentity(const Policy &policy, std::string &error);

// landlock.cpp: the policy's "landlock" object as a Landlock domain, sized by the kernel's
// ABI; sets no_new_privs itself. Fails when the kernel has no Landlock.
bool applyLandlock(const Policy &policy, const Launch &launch, std::string &error);
// The Landlock ABI the kernel reports, or -errno (ENOSYS/EOPNOTSUPP: no Landlock).
int landlockAbi();

// seccomp.cpp: buildSeccomp compiles the policy's filter (seccomp_filter.h) while the jail may
// still allocate; with `countDenials` (and a kernel with user notifications) its denials
// notify a listener instead of failing at once (`notifies`). applySeccomp loads it with the
// seccomp syscall only (no_new_privs must be set), as the last step before execve; it returns
// the listener descriptor for a filter that notifies, 0 for one that does not, -1 on failure.
struct SeccompProgram
{
    std::vector<sock_filter> code;
    bool notifies = false;
};
bool buildSeccomp(const Policy &policy, bool countDenials, SeccompProgram &out, std::string &error);
int applySeccomp(const SeccompProgram &program, std::string &error);
bool seccompUserNotifAvailable();

// exec.cpp: chdir into workspace/cwd (beneath the workspace, as the job's uid: inside the
// minimal root by its path there, without one through launch.workspaceFd), before seccomp,
// which refuses openat2 (RESOLVE_BENEATH needs it).
bool enterWorkdir(const Policy &policy, const Launch &launch, std::string &error);
// exec.cpp: resolve the program through the policy's PATH, execve with exactly the policy
// environment. Returns only on failure.
bool execJob(const Policy &policy, const Launch &launch, char *const argv[], std::string &error);
// exec.cpp, before the identity switch: launch.programFd for `program` (see Launch).
void holdProgram(const Policy &policy, const char *program, Launch &launch);

// Shared helper: "<what>: <strerror(err)>".
std::string errnoText(const std::string &what, int err);

} // namespace cmcp::jail
