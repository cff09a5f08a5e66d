// cmcp-jail: applies a job policy's isolation layers in a fixed order, then execs the job.
//
//   cmcp-jail (--policy-fd N | --policy FILE) [--report-fd N] -- PROGRAM [ARGS...]
//
// This file is the one place that defines the order. Every step either succeeds or ends the
// jail with its own exit status (exit_codes.h) and one line on stderr,
//   cmcp-jail: <layer>: <what failed>: <reason>
// (and the same line on --report-fd, if given), before any code of the job runs. A layer the
// policy asks for and this build cannot apply fails closed the same way.
#include "exit_codes.h"
#include "layers.h"
#include "policy.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace cmcp::jail;

namespace cmcp::jail {
std::string errnoText(const std::string &what, int err)
{
    return what + ": " + std::strerror(err);
}
} // namespace cmcp::jail

namespace {

int g_reportFd = -1;

[[noreturn]] void fail(const char *step, int code, const std::string &message)
{
    std::string line = std::string("cmcp-jail: ") + step + ": " + message + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    if (g_reportFd >= 0)
        (void)!::write(g_reportFd, line.data(), line.size());
    ::_exit(code);
}

[[noreturn]] void usage(const std::string &message)
{
    fail("usage", kExitUsage,
         message
                 + " (usage: cmcp-jail (--policy-fd N | --policy FILE) [--report-fd N] -- PROGRAM "
                   "[ARGS...])");
}

bool parseFd(const char *s, int &out)
{
    char *end = nullptr;
    errno = 0;
    long v = std::strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 65535)
        return false;
    out = static_cast<int>(v);
    return true;
}

// A requested layer this build does not implement yet: refuse, never skip.
void notBuilt(const Policy &policy, Layer layer, int code)
{
    if (policy.wants(layer))
        fail(layerName(layer), code, "requested, but this build of cmcp-jail cannot apply it yet");
}

} // namespace

int main(int argc, char *argv[])
{
    Launch launch;
    launch.parentPid = ::getppid();

    // --- command line ---------------------------------------------------------------------
    int policyFd = -1;
    const char *policyFile = nullptr;
    int i = 1;
    for (; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (i + 1 >= argc)
            usage(a + ": missing value or unknown option");
        if (a == "--policy-fd") {
            if (!parseFd(argv[++i], policyFd))
                usage("--policy-fd: not a descriptor number");
        } else if (a == "--policy") {
            policyFile = argv[++i];
        } else if (a == "--report-fd") {
            if (!parseFd(argv[++i], g_reportFd) || g_reportFd <= 2)
                usage("--report-fd: not a descriptor above 2");
            if (::fcntl(g_reportFd, F_SETFD, FD_CLOEXEC) != 0) {
                int fd = g_reportFd;
                g_reportFd = -1;
                usage("--report-fd " + std::to_string(fd) + ": " + std::strerror(errno));
            }
        } else {
            usage(a + ": unknown option");
        }
    }
    if ((policyFd >= 0) == (policyFile != nullptr))
        usage("exactly one of --policy-fd and --policy is needed");
    if (i >= argc)
        usage("no program after --");
    char **jobArgv = argv + i;
    launch.keepFd = g_reportFd;

    // --- 1. policy ------------------------------------------------------------------------
    std::string text, error;
    bool read = policyFile ? readPolicyFile(policyFile, text, error)
                           : readPolicyFd(policyFd, text, error);
    if (policyFd >= 0 && policyFd != g_reportFd)
        ::close(policyFd);
    if (!read)
        fail("policy", kExitPolicy, error);
    Policy policy;
    if (!parsePolicy(text, policy, error))
        fail("policy", kExitPolicy, error);

    // --- 2. while still privileged ---------------------------------------------------------
    // cgroup: join the per-job cgroup first, so everything after is accounted and bounded.
    notBuilt(policy, Layer::Cgroup, kExitCgroup);
    // namespaces and mounts: user/mount/pid/net/ipc/uts, pivot_root into the minimal root.
    notBuilt(policy, Layer::Namespaces, kExitNamespaces);
    // landlock: restrict_self needs CAP_SYS_ADMIN or no_new_privs; either holds here.
    if (policy.wants(Layer::Landlock) && !applyLandlock(policy, error))
        fail("landlock", kExitLandlock, error);
    // apparmor: aa_change_onexec must happen before no_new_privs (set by identity), which
    // would otherwise forbid the profile transition.
    notBuilt(policy, Layer::Apparmor, kExitApparmor);

    // rlimits: before the uid switch (RLIMIT_NPROC is checked on setuid and on every fork).
    if (policy.wants(Layer::Rlimits) && !applyRlimits(policy, error))
        fail("rlimits", kExitRlimits, error);

    // seccomp: compiled now, while allocating is still harmless; loaded last, below.
    SeccompProgram seccomp;
    if (policy.wants(Layer::Seccomp) && !buildSeccomp(policy, seccomp, error))
        fail("seccomp", kExitSeccomp, error);

    // --- 3. identity: from here on the process is the job's unprivileged uid ---------------
    if (!applyIdentity(policy, launch, error))
        fail("identity", kExitIdentity, error);

    // --- 4. seccomp last: the filter then only has to allow execve itself ------------------
    if (policy.wants(Layer::Seccomp) && !applySeccomp(seccomp, error))
        fail("seccomp", kExitSeccomp, error);

    // --- 5. exec ---------------------------------------------------------------------------
    // Last guard, whatever the layers above did: never exec as host uid 0.
    if (::getuid() == 0 || ::geteuid() == 0 || ::getgid() == 0 || ::getegid() == 0)
        fail("identity", kExitIdentity, "refusing to exec the job as host uid/gid 0");
    execJob(policy, jobArgv, error);
    fail("exec", kExitExec, error);
}
