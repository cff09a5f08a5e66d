// A call's process, forked from a cell (template.h): from the cell's uid, with the five
// capabilities the cell keeps in the template's user namespace, to the call's own uid with none
// anywhere, in the same order of layers as a cold job (main.cpp), but for the minimal root and
// the pid namespace, which the cell built before it.
#include "jail/exit_codes.h"
#include "jail/zygote_call.h"
#include "posix/DescriptorPassing.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace cmcp::jail {

namespace {

bool writeProcFile(const char *path, const std::string &text, std::string &error)
{
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    const bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    if (!ok)
        error = errnoText(std::string("writing ") + path, errno);
    if (fd >= 0)
        ::close(fd);
    return ok;
}

// The descriptors an armed call's process keeps (zygote_call.h), at their numbers; every other
// one of the cell's is closed (its counters, its signal descriptor, the library's).
bool keepArmedDescriptors(int socket, int report, int view, std::string &error)
{
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    constexpr int kParking = 64;
    // Every source out of the way of the numbers it goes to.
    const int parked[4] = {null < 0 ? -1 : ::fcntl(report, F_DUPFD_CLOEXEC, kParking),
                           ::fcntl(socket, F_DUPFD_CLOEXEC, kParking),
                           null < 0 ? -1 : ::fcntl(null, F_DUPFD_CLOEXEC, kParking),
                           view < 0 ? -1 : ::fcntl(view, F_DUPFD_CLOEXEC, kParking)};
    if (null < 0 || parked[0] < 0 || parked[1] < 0 || parked[2] < 0 || (view >= 0 && parked[3] < 0)
        || ::dup3(parked[0], kCallReportFd, O_CLOEXEC) < 0
        || ::dup3(parked[1], kArmedSocketFd, O_CLOEXEC) < 0
        || ::dup3(parked[2], kArmedNullFd, O_CLOEXEC) < 0
        || (view >= 0 && ::dup3(parked[3], kArmedViewFd, O_CLOEXEC) < 0)) {
        error = errnoText("placing the armed call's descriptors", errno);
        return false;
    }
    const int lastKept = view >= 0 ? kArmedViewFd : kArmedNullFd;
    if (::close_range(3, kCallReportFd - 1, 0) != 0
        || ::close_range(unsigned(lastKept) + 1, ~0u, 0) != 0) {
        error = errnoText("close_range", errno);
        return false;
    }
    return true;
}

// A user namespace of the caller's own mapping 1000 to exactly its uid and gid, and an IPC
// namespace of its own: no SysV object or message queue of an earlier call. `extraFlags`: a
// mount namespace of its own too, for a call that attaches its workspace's view.
bool enterUserNamespace(uid_t uid, int extraFlags, std::string &error)
{
    if (::unshare(CLONE_NEWUSER | CLONE_NEWIPC | extraFlags) != 0) {
        error = errnoText("unshare of the call's own namespaces", errno);
        return false;
    }
    // The credential changes left the process not dumpable, which gives its /proc files to the
    // host's root: its own maps could not be written.
    if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) {
        error = errnoText("prctl(PR_SET_DUMPABLE)", errno);
        return false;
    }
    const std::string inside = std::to_string(kInsideId);
    return writeProcFile("/proc/self/setgroups", "deny", error)
            && writeProcFile("/proc/self/uid_map", inside + " " + std::to_string(uid) + " 1\n",
                             error)
            && writeProcFile("/proc/self/gid_map", inside + " " + inside + " 1\n", error);
}

// The call's pool uid in the template's user namespace (where the pool's gid is 1000), then a
// user namespace of its own; with a view of the workspace, a mount namespace of its own in
// which the view covers the cell's workspace, and the call starts there. The cell's own
// workspace stays beneath, out of reach: the call holds no descriptor of it and, once sealed,
// no capability to unmount what covers it.
bool enterOwnNamespaces(const Policy &policy, uid_t uid, bool hasView, std::string &error)
{
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kInsideId, kInsideId, kInsideId) != 0
        || ::setresuid(uid, uid, uid) != 0) {
        error = errnoText("switching to uid " + std::to_string(uid), errno);
        return false;
    }
    if (!enterUserNamespace(uid, hasView ? CLONE_NEWNS : 0, error))
        return false;
    if (!hasView)
        return true;
    const std::string &workspace = policy.jobWorkspace();
    const bool attached = attachWorkspaceView(kArmedViewFd, workspace, error);
    ::close(kArmedViewFd);
    if (!attached)
        return false;
    if (::chdir(workspace.c_str()) != 0) {
        error = errnoText("chdir into the workspace's view", errno);
        return false;
    }
    return true;
}

} // namespace

std::string probeCallNamespaces()
{
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0)
        return errnoText("pipe2", errno);
    const pid_t child = ::fork();
    if (child < 0) {
        const int err = errno;
        ::close(report[0]);
        ::close(report[1]);
        return errnoText("fork", err);
    }
    if (child == 0) {
        ::close(report[0]);
        std::string error;
        if (enterUserNamespace(::getuid(), 0, error))
            ::_exit(0);
        (void)!::write(report[1], error.data(), error.size());
        ::_exit(1);
    }
    ::close(report[1]);
    char buffer[512];
    const ssize_t n = ::read(report[0], buffer, sizeof buffer);
    ::close(report[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) { }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return {};
    return n > 0 ? std::string(buffer, std::size_t(n))
                 : "the probe of a call's user namespace failed";
}

bool armCall(const CellSetup &setup, uid_t uid, int workspaceView, int socket, int report,
             CallRefusal &refusal)
{
    const Policy &policy = setup.policy;
    std::string error;
    const auto fail = [&](const char *layer, int code) {
        refusal = {layer, code, error};
        return false;
    };
    if (!keepArmedDescriptors(socket, report, workspaceView, error))
        return fail("identity", kExitIdentity);
    if (!enterOwnNamespaces(policy, uid, workspaceView >= 0, error))
        return fail("namespaces", kExitNamespaces);
    // From here as a cold job: the identity switch keeps the new namespace's capabilities for
    // the steps that need them, the seal drops them.
    const Launch launch{};
    if (!switchIdentity(policy, launch, error))
        return fail("identity", kExitIdentity);
    if (policy.wants(Layer::Rlimits) && !applyRlimits(policy, error))
        return fail("rlimits", kExitRlimits);
    if (!limitNestedUserNamespaces("/proc", 0, error))
        return fail("namespaces", kExitNamespaces);
    if (policy.wants(Layer::Apparmor) && !changeApparmorProfile(policy, error))
        return fail("apparmor", kExitApparmor);
    if (policy.wants(Layer::Landlock) && !applyLandlock(policy, launch, error))
        return fail("landlock", kExitLandlock);
    if (!sealIdentity(policy, error))
        return fail("identity", kExitIdentity);
    if (policy.wants(Layer::Seccomp)) {
        // The listener of a filter that notifies goes to the cell, which answers and counts
        // every denied call; the call keeps no copy.
        const int listener = applySeccomp(setup.seccomp, error);
        if (listener < 0)
            return fail("seccomp", kExitSeccomp);
        if (listener > 0) {
            const bool sent = sendDescriptor(kCallReportFd, listener);
            const int err = errno;
            ::close(listener);
            if (!sent) {
                error = errnoText("sending the seccomp listener to the cell", err);
                return fail("seccomp", kExitSeccomp);
            }
        }
    }
    if (::getuid() == 0 || ::geteuid() == 0 || ::getgid() == 0 || ::getegid() == 0) {
        error = "refusing to run the call as uid/gid 0";
        return fail("identity", kExitIdentity);
    }
    return true;
}

bool finishCall(const CallDescriptors &fds, CallRefusal &refusal)
{
    const auto fail = [&](const char *what) {
        refusal = {"identity", kExitIdentity, errnoText(what, errno)};
        return false;
    };
    // 0 from /dev/null, 1 and 2 the call's output, kCallChannelFd its result channel; a received
    // descriptor never has a number taken above (they were open when it came).
    if (::dup2(kArmedNullFd, 0) < 0 || ::dup2(fds.output, 1) < 0 || ::dup2(fds.error, 2) < 0
        || (fds.channel >= 0 && ::dup2(fds.channel, kCallChannelFd) < 0))
        return fail("dup2 of the call's descriptors");
    if (fds.channel < 0)
        ::close(kCallChannelFd);
    // The seal marked descriptors close-on-exec, but no exec follows: the result channel must
    // stay usable.
    if (fds.channel >= 0 && ::fcntl(kCallChannelFd, F_SETFD, 0) != 0)
        return fail("the result channel");
    if (::close_range(kArmedSocketFd, ~0u, 0) != 0)
        return fail("close_range");
    // What a cold job is after its exec: its /proc files its own, ptrace-able by its own uid.
    // Not before: until now the process held the cell's socket.
    if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
        return fail("prctl(PR_SET_DUMPABLE)");
    ::close(kCallReportFd);
    return true;
}

} // namespace cmcp::jail
