// cmcp-jail: applies a job policy's isolation layers in a fixed order, then execs the job.
//
//   cmcp-jail (--policy-fd N | --policy FILE) [--report-fd N] [--pass-fd N] [--egress-fd N]
//             [--workspace-view-fd N] [--serve-template SOCKET --template-uids FIRST:COUNT] --
//             PROGRAM [ARGS...]
//
// --serve-template builds the jail once as a template, whose cells run PROGRAM once each and
// fork every call from it (template.h).
//
// This file is the one place that defines the order. The jail process becomes the job's
// monitor (monitor.cpp); the job process applies the layers below and execs. Every step either
// succeeds or ends the jail with its own exit status (exit_codes.h) and one line on stderr,
//   cmcp-jail: <layer>: <what failed>: <reason>
// (and a "refused" record on --report-fd, see report.h), before any code of the job runs. A
// layer the policy asks for and this machine cannot apply fails closed the same way.
#include "jail/exit_codes.h"
#include "jail/layers.h"
#include "jail/monitor.h"
#include "jail/protocol/Policy.h"
#include "jail/report.h"
#include "jail/template.h"
#include "posix/DescriptorPassing.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace cmcp::jail;

namespace {

[[noreturn]] void usage(const std::string &message)
{
    refuse("usage", kExitUsage,
           message
                   + " (usage: cmcp-jail (--policy-fd N | --policy FILE) [--report-fd N] "
                     "[--pass-fd N] [--egress-fd N] [--workspace-view-fd N] [--serve-template "
                     "SOCKET --template-uids "
                     "FIRST:COUNT] -- PROGRAM [ARGS...])");
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

// "FIRST:COUNT", both above 0.
bool parseUidRange(const char *s, TemplateOptions &out)
{
    char *end = nullptr;
    errno = 0;
    const unsigned long first = std::strtoul(s, &end, 10);
    if (errno || end == s || *end != ':')
        return false;
    const char *countText = end + 1;
    const unsigned long count = std::strtoul(countText, &end, 10);
    if (errno || end == countText || *end || first < kMinId || count == 0 || count > 65536
        || first + count > 0xFFFFFFFEul)
        return false;
    out.uidFirst = static_cast<uid_t>(first);
    out.uidCount = static_cast<uid_t>(count);
    return true;
}

// The job process, after the monitor placed it (namespaces' id maps, cgroup). Layers in this
// fixed order: the workspace held, identity, resources, namespaces and filesystem, AppArmor
// (must precede no_new_privs), Landlock, then the identity sealed and seccomp last, so the
// filter only has to allow execve itself.
void runJob(const JobProcess &job)
{
    const Policy &policy = job.policy;
    std::string error;
    auto check = [&](bool ok, const char *layer, int code) {
        if (!ok)
            failJob(job.monitorFd, layer, code, error);
    };
    // 0. the workspace: opened by the monitor while privileged and carried through the clone as
    //    the working directory; held by a descriptor from here on, so no layer below reaches it
    //    by its host path as the job's uid (workspace.cpp).
    Launch launch = job.launch;
    holdWorkspace(launch);
    holdProgram(policy, job.argv[0], launch);
    // 1. identity: from here on the process is the job's unprivileged uid (inside a user
    //    namespace, still holding that namespace's capabilities for the mount work).
    check(switchIdentity(policy, launch, error), "identity", kExitIdentity);
    // 2. resources: rlimits here; the monitor joins the job to its cgroup meanwhile.
    if (policy.wants(Layer::Rlimits))
        check(applyRlimits(policy, error), "rlimits", kExitRlimits);
    // 3. namespaces: the minimal root, loopback, hostname.
    if (policy.wants(Layer::Namespaces))
        check(enterMinimalRoot(policy, launch, error), "namespaces", kExitNamespaces);
    //    The job's one way out of its network namespace, handed to the supervisor.
    if (launch.egressFd >= 0)
        check(handOverEgressListener(policy, launch, error), "namespaces", kExitNamespaces);
    // 4. AppArmor: the profile switch happens on exec; requested before no_new_privs.
    if (policy.wants(Layer::Apparmor))
        check(applyApparmor(policy, error), "apparmor", kExitApparmor);
    // 5. Landlock (sets no_new_privs itself).
    if (policy.wants(Layer::Landlock))
        check(applyLandlock(policy, launch, error), "landlock", kExitLandlock);
    // 2 (end). resources: in its cgroup before anything of the job runs.
    check(awaitPlacement(launch, error), "cgroup", kExitCgroup);
    //    The cgroup namespace, rooted at the cgroup the job is now in.
    if (policy.wants(Layer::Namespaces))
        check(enterCgroupNamespace(error), "namespaces", kExitNamespaces);
    // 6. every capability gone, verified; descriptors close on exec.
    check(sealIdentity(policy, error), "identity", kExitIdentity);
    // The one descriptor the supervisor hands the job survives the exec.
    if (launch.passFd >= 0 && ::fcntl(launch.passFd, F_SETFD, 0) != 0)
        failJob(job.monitorFd, "identity", kExitIdentity,
                errnoText("--pass-fd " + std::to_string(launch.passFd), errno));
    //    The working directory, beneath the workspace (openat2, which seccomp refuses).
    if (!enterWorkdir(policy, launch, error))
        failJob(job.monitorFd, "exec", kExitExec, error);
    // 7. seccomp, compiled by the monitor, loaded last; the listener of a filter that notifies
    //    goes to the monitor, which answers every denied call, and the job keeps no copy.
    if (policy.wants(Layer::Seccomp)) {
        const int listener = applySeccomp(job.seccomp, error);
        check(listener >= 0, "seccomp", kExitSeccomp);
        if (listener > 0) {
            const bool sent = cmcp::sendDescriptor(job.listenerChannel, listener);
            const int err = errno;
            ::close(listener);
            ::close(job.listenerChannel);
            if (!sent)
                failJob(job.monitorFd, "seccomp", kExitSeccomp,
                        errnoText("sending the seccomp listener to the monitor", err));
        }
    }
    // Last guard, whatever the layers above did: never exec as uid 0.
    if (::getuid() == 0 || ::geteuid() == 0 || ::getgid() == 0 || ::getegid() == 0)
        failJob(job.monitorFd, "identity", kExitIdentity, "refusing to exec the job as uid/gid 0");
    execJob(policy, launch, job.argv, error);
    failJob(job.monitorFd, "exec", kExitExec, error);
}

} // namespace

int main(int argc, char *argv[])
{
    // --- command line ---------------------------------------------------------------------
    int policyFd = -1, passFd = -1, reportFd = -1, egressFd = -1, workspaceViewFd = -1;
    const char *policyFile = nullptr;
    TemplateOptions serveTemplate;
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
        } else if (a == "--pass-fd") {
            if (!parseFd(argv[++i], passFd) || passFd <= 2)
                usage("--pass-fd: not a descriptor above 2");
            if (::fcntl(passFd, F_SETFD, FD_CLOEXEC) != 0)
                usage("--pass-fd " + std::to_string(passFd) + ": " + std::strerror(errno));
        } else if (a == "--egress-fd") {
            if (!parseFd(argv[++i], egressFd) || egressFd <= 2)
                usage("--egress-fd: not a descriptor above 2");
            if (::fcntl(egressFd, F_SETFD, FD_CLOEXEC) != 0)
                usage("--egress-fd " + std::to_string(egressFd) + ": " + std::strerror(errno));
        } else if (a == "--workspace-view-fd") {
            if (!parseFd(argv[++i], workspaceViewFd) || workspaceViewFd <= 2)
                usage("--workspace-view-fd: not a descriptor above 2");
            if (::fcntl(workspaceViewFd, F_SETFD, FD_CLOEXEC) != 0)
                usage("--workspace-view-fd " + std::to_string(workspaceViewFd) + ": "
                      + std::strerror(errno));
        } else if (a == "--serve-template") {
            serveTemplate.socketPath = argv[++i];
        } else if (a == "--template-uids") {
            if (!parseUidRange(argv[++i], serveTemplate))
                usage("--template-uids: not FIRST:COUNT (uids from 1000, at most 65536)");
        } else if (a == "--report-fd") {
            if (!parseFd(argv[++i], reportFd) || reportFd <= 2)
                usage("--report-fd: not a descriptor above 2");
            if (::fcntl(reportFd, F_SETFD, FD_CLOEXEC) != 0)
                usage("--report-fd " + std::to_string(reportFd) + ": " + std::strerror(errno));
            setReportFd(reportFd);
        } else {
            usage(a + ": unknown option");
        }
    }
    if (passFd >= 0 && (passFd == policyFd || passFd == reportFd))
        usage("--pass-fd must differ from --policy-fd and --report-fd");
    if (egressFd >= 0 && (egressFd == policyFd || egressFd == reportFd || egressFd == passFd))
        usage("--egress-fd must differ from --policy-fd, --report-fd and --pass-fd");
    if ((policyFd >= 0) == (policyFile != nullptr))
        usage("exactly one of --policy-fd and --policy is needed");
    if (i >= argc)
        usage("no program after --");
    if (!serveTemplate.socketPath.empty() && (serveTemplate.uidCount == 0 || passFd >= 0))
        usage("--serve-template needs --template-uids and no --pass-fd");
    char **jobArgv = argv + i;

    // --- policy ---------------------------------------------------------------------------
    std::string text, error;
    bool read = policyFile ? readPolicyFile(policyFile, text, error)
                           : readPolicyFd(policyFd, text, error);
    if (policyFd > 2)
        ::close(policyFd);
    if (!read)
        refuse("policy", kExitPolicy, error);
    Policy policy;
    if (!parsePolicy(text, policy, error))
        refuse("policy", kExitPolicy, error);
    const bool egressPort = policy.namespaces && policy.namespaces->egressPort;
    if (egressPort != (egressFd >= 0))
        usage(egressPort ? "namespaces.egress_port needs --egress-fd"
                         : "--egress-fd needs the policy's namespaces.egress_port");
    // A job with an egress listener hands the daemon the listener of its own network
    // namespace; a template's calls have none of their own to hand.
    if (egressPort && !serveTemplate.socketPath.empty())
        usage("namespaces.egress_port cannot be served by a template: each such job listens in a "
              "network namespace of its own");

    // A template's calls are given their views one by one (zygote_call.cpp).
    if (workspaceViewFd >= 0
        && (!policy.wants(Layer::Namespaces) || !serveTemplate.socketPath.empty()))
        usage("--workspace-view-fd needs the namespaces layer, and no --serve-template");

    // --- compiled here, once, while allocating is harmless; loaded by the job last --------
    // Denials notify a listener that counts them: a cold start's monitor, a template call's
    // cell.
    SeccompProgram seccomp;
    if (policy.wants(Layer::Seccomp) && !buildSeccomp(policy, true, seccomp, error))
        refuse("seccomp", kExitSeccomp, error);

    if (!serveTemplate.socketPath.empty())
        runTemplateMonitor(policy, text, seccomp, serveTemplate, jobArgv);

    // --- the monitor: cgroup, clone into the namespaces, go, wait, report -----------------
    runMonitor(policy, seccomp, jobArgv, {passFd, egressFd, workspaceViewFd}, runJob);
}
