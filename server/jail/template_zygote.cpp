// The template process, and the two processes it forks for each call: the shepherd and the
// call process (see template.h). Everything here runs inside the template's namespaces, as
// uids of the pool; none of it runs a call's code but the final execve of the call process.
#include "jail/exit_codes.h"
#include "jail/sender_credentials.h"
#include "posix/DescriptorPassing.h"
#include "jail/monitor.h"
#include "jail/report.h"
#include "jail/template.h"

#include "WriteAll.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cmcp::jail {

namespace {

namespace protocol = template_protocol;

// Where a call process parks the descriptors it received before it puts them at their numbers
// (0..2 and --pass-fd, which the helper bounds below this).
constexpr int kParkedFdFloor = 512;

// The descriptors of a call as the helper hands them over (template_protocol::Request).
struct CallFds
{
    int payload = -1; // memfd: the policy, then the NUL-terminated arguments
    int in = -1, out = -1, err = -1;
    int pass = -1; // -1: none
};

CallFds callFds(const std::vector<int> &received, const protocol::Fork &fork)
{
    return {received[0], received[1], received[2], received[3],
            fork.passFd >= 0 ? received[4] : -1};
}

std::size_t expectedFds(const protocol::Fork &fork)
{
    return fork.passFd >= 0 ? 5 : 4;
}

void sendToHelper(int socket, char kind, const std::string &body)
{
    std::string message(1, kind);
    message += body;
    (void)!::send(socket, message.data(), message.size(), MSG_NOSIGNAL);
}

void sendStatus(int socket, int status)
{
    char message[1 + sizeof status];
    message[0] = 'x';
    std::memcpy(message + 1, &status, sizeof status);
    (void)!::send(socket, message, sizeof message, MSG_NOSIGNAL);
}

// A failure of the shepherd itself, before the call process could run: the helper reports it
// as the named layer's refusal.
[[noreturn]] void shepherdFails(int socket, const std::string &layer, int code,
                                const std::string &message)
{
    sendToHelper(socket, 'f', layer + "\n" + message);
    int status = code << 8; // as waitpid would give "exited with code"
    sendStatus(socket, status);
    ::_exit(0);
}

// Moves `fd` to `floor` or above (close-on-exec), closing the original.
int park(int fd, int floor)
{
    if (fd < 0)
        return fd;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, floor);
    ::close(fd);
    return moved;
}

// The call's policy and NUL-terminated arguments, from the request's memfd.
bool readCall(int payloadFd, const protocol::Fork &fork, std::string &payload, Policy &policy,
              std::vector<char *> &argv, std::string &error)
{
    payload.assign(std::size_t(fork.policyBytes) + fork.argvBytes, '\0');
    if (::pread(payloadFd, payload.data(), payload.size(), 0)
        != static_cast<ssize_t>(payload.size())) {
        error = errnoText("reading the call", errno);
        return false;
    }
    if (!parsePolicy(payload.substr(0, fork.policyBytes), policy, error))
        return false;
    for (std::size_t at = fork.policyBytes; at < payload.size();) {
        argv.push_back(payload.data() + at);
        at = payload.find('\0', at);
        if (at == std::string::npos) {
            error = "arguments not NUL-terminated";
            return false;
        }
        ++at;
    }
    if (argv.empty()) {
        error = "no program";
        return false;
    }
    argv.push_back(nullptr);
    return true;
}

// The call process: pid 1 of its own pid namespace, in new user, mount and ipc namespaces (and
// network, without the policy's network), made ahead of its call and placed in the call's
// cgroup already. It waits for the call (its descriptors, from the shepherd, which has mapped
// the call's uid by then), then takes its layers in the same order as a cold job's (main.cpp),
// with the per-call namespace work in place of the minimal root the template built.
[[noreturn]] void runCall(const SeccompProgram &seccomp, int callSocket, int goFd, int failureFd)
{
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGCHLD, SIG_DFL);
    protocol::Fork fork;
    std::vector<int> received;
    if (receiveWithFds(callSocket, &fork, sizeof fork, received, 5) != sizeof fork
        || received.size() != expectedFds(fork))
        ::_exit(kExitIdentity); // no call came: the shepherd is gone
    ::close(callSocket);
    CallFds fds = callFds(received, fork);
    // The call's descriptors at their numbers, nothing else of the template's left open.
    for (int *fd : {&fds.payload, &fds.in, &fds.out, &fds.err, &fds.pass, &goFd, &failureFd})
        *fd = park(*fd, kParkedFdFloor);
    const int passFdNumber = fork.passFd;
    if (::dup2(fds.in, 0) < 0 || ::dup2(fds.out, 1) < 0 || ::dup2(fds.err, 2) < 0
        || (fds.pass >= 0 && ::dup3(fds.pass, passFdNumber, O_CLOEXEC) < 0))
        failJob(failureFd, "identity", kExitIdentity, errnoText("dup2 of the call's stdio", errno));
    for (int fd : {fds.in, fds.out, fds.err, fds.pass})
        if (fd >= 0)
            ::close(fd);
    std::string payload, error;
    Policy policy;
    std::vector<char *> argv;
    if (!readCall(fds.payload, fork, payload, policy, argv, error))
        failJob(failureFd, "policy", kExitPolicy, error);
    ::close(fds.payload);

    Launch launch{goFd, fds.pass >= 0 ? passFdNumber : -1, -1, 0};
    auto check = [&](bool ok, const char *layer, int code) {
        if (!ok)
            failJob(failureFd, layer, code, error);
    };
    check(switchIdentity(policy, launch, error), "identity", kExitIdentity);
    if (policy.wants(Layer::Rlimits))
        check(applyRlimits(policy, error), "rlimits", kExitRlimits);
    check(enterCallNamespaces(policy, error), "namespaces", kExitNamespaces);
    if (policy.wants(Layer::Cgroup) && ::unshare(CLONE_NEWCGROUP) != 0)
        failJob(failureFd, "cgroup", kExitCgroup, errnoText("unshare(CLONE_NEWCGROUP)", errno));
    if (policy.wants(Layer::Apparmor))
        check(applyApparmor(policy, error), "apparmor", kExitApparmor);
    if (policy.wants(Layer::Landlock))
        check(applyLandlock(policy, launch, error), "landlock", kExitLandlock);
    check(sealIdentity(policy, error), "identity", kExitIdentity);
    if (launch.passFd >= 0 && ::fcntl(launch.passFd, F_SETFD, 0) != 0)
        failJob(failureFd, "identity", kExitIdentity,
                errnoText("--pass-fd " + std::to_string(launch.passFd), errno));
    if (policy.wants(Layer::Seccomp))
        check(applySeccomp(seccomp, error) >= 0, "seccomp", kExitSeccomp);
    if (::getuid() == 0 || ::geteuid() == 0 || ::getgid() == 0 || ::getegid() == 0)
        failJob(failureFd, "identity", kExitIdentity, "refusing to exec the job as uid/gid 0");
    execJob(policy, launch, argv.data(), error);
    failJob(failureFd, "exec", kExitExec, error);
}

std::string drainPipe(int fd)
{
    std::string text;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || text.size() > 65536)
            return text;
        text.append(buf, static_cast<std::size_t>(n));
    }
}

// The shepherd: a fork of the template, made ahead of its call. Clones the call process, has
// the helper place it, and when the call comes writes its id maps, hands it the call, tells
// the helper whether its exec succeeded and how it ended.
[[noreturn]] void runShepherd(const Policy &templatePolicy, const SeccompProgram &seccomp,
                              int socket, int controlFd)
{
    ::close(controlFd);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr); // the template takes SIGCHLD by signalfd
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    // The template is not dumpable, and a clone inherits that: the call process's /proc files
    // would belong to the host's root, and this process could not write its id maps. The
    // shepherd is dumpable again: only processes of the template's uid could ptrace it, and
    // none of them runs a call's code.
    ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    int go[2], failure[2], pair[2];
    if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(failure, O_CLOEXEC) != 0
        || ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        ::_exit(kExitIdentity);
    // Every call of this template has the template's policy but for its uid: the same network.
    int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;
    if (!templatePolicy.namespaces->network)
        flags |= CLONE_NEWNET;
    const pid_t call = cloneProcess(flags);
    if (call < 0)
        ::_exit(kExitNamespaces); // the helper sees the socket close: no call process
    if (call == 0) {
        ::close(go[1]);
        ::close(failure[0]);
        ::close(pair[0]);
        ::close(socket);
        runCall(seccomp, pair[1], go[0], failure[1]);
    }
    ::close(go[0]);
    ::close(failure[1]);
    ::close(pair[1]);
    // The call's mount namespace, held until the call's end has been reported. Whoever drops
    // its last reference unmounts its tree, and that waits for an RCU grace period
    // (namespace_unlock, 5 to 60 ms on a busy machine): held here, the call process's exit does
    // not wait for it, and neither does the result; this process pays it as it exits. Opened
    // while the call process is still this process's uid and dumpable, before it ran anything.
    // Nothing of it is reachable from another call (their mount namespaces are their own), and
    // the held /tmp goes with this process moments after the call.
    const int heldMounts =
            ::open(("/proc/" + std::to_string(call) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC);
    (void)heldMounts; // closed by this process's exit; without it, the exit only waits
    auto abandon = [call] {
        ::kill(call, SIGKILL);
        ::waitpid(call, nullptr, 0);
        ::_exit(0);
    };
    char byte = 0;
    if (!sendNamingProcess(socket, 'c', call) || ::read(socket, &byte, 1) != 1 || byte != 'p')
        abandon(); // not placed: it never runs
    protocol::Fork fork;
    std::vector<int> received;
    if (receiveWithFds(socket, &fork, sizeof fork, received, 5) != sizeof fork
        || received.size() != expectedFds(fork))
        abandon(); // no call for it (the template retired, the helper gave up)
    // The call's uid alone, seen as kInsideId inside: no other uid of the pool is mapped there.
    std::string error;
    if (!writeIdMap(call, kInsideId, fork.uid, 1, kInsideId, fork.gid, error)) {
        ::kill(call, SIGKILL);
        ::waitpid(call, nullptr, 0);
        shepherdFails(socket, "namespaces", kExitNamespaces, error);
    }
    const bool handed = sendWithFds(pair[0], &fork, sizeof fork, received);
    closeAll(received);
    ::close(pair[0]);
    if (!handed) {
        ::kill(call, SIGKILL);
        ::waitpid(call, nullptr, 0);
        shepherdFails(socket, "identity", kExitIdentity, errnoText("handing the call over", errno));
    }
    const std::string failed = drainPipe(failure[0]);
    ::close(failure[0]);
    if (failed.empty())
        sendToHelper(socket, 's', {});
    else
        sendToHelper(socket, 'f', failed);
    int status = 0;
    while (::waitpid(call, &status, 0) < 0 && errno == EINTR) { }
    sendStatus(socket, status);
    ::_exit(0);
}

// The template's own identity: the policy's uid and gid, which the monitor mapped to themselves,
// keeping the capabilities of this user namespace (the switch is from the overflow uid, so the
// kernel clears none), not dumpable, dying with the monitor.
bool becomeTemplate(const Policy &policy, const Launch &launch, std::string &error)
{
    if (::setgroups(0, nullptr) != 0) {
        error = errnoText("setgroups(0)", errno);
        return false;
    }
    if (::setresgid(policy.gid, policy.gid, policy.gid) != 0
        || ::setresuid(policy.uid, policy.uid, policy.uid) != 0) {
        error = errnoText("setresuid/setresgid to the template's ids", errno);
        return false;
    }
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0
        || ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        error = errnoText("prctl(PR_SET_PDEATHSIG/PR_SET_DUMPABLE)", errno);
        return false;
    }
    pollfd p{launch.monitorAliveFd, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR))) {
        error = "the monitor died before the parent-death signal was set";
        return false;
    }
    return true;
}

} // namespace

void runTemplateProcess(const Policy &policy, const SeccompProgram &seccomp, Launch launch,
                        int controlFd, int failureFd)
{
    std::string error;
    holdWorkspace(launch);
    if (!becomeTemplate(policy, launch, error))
        failJob(failureFd, "identity", kExitIdentity, error);
    if (!enterMinimalRoot(policy, launch, error))
        failJob(failureFd, "namespaces", kExitNamespaces, error);
    if (!awaitPlacement(launch, error))
        failJob(failureFd, "cgroup", kExitCgroup, error);
    if (!enterCgroupNamespace(error))
        failJob(failureFd, "namespaces", kExitNamespaces, error);
    if (launch.workspaceFd >= 0)
        ::close(launch.workspaceFd); // calls reach the workspace by its path inside
    // Shepherds are reaped as they end (never waited for): their CPU time, and through theirs
    // that of their calls, adds up in the template's, where a measurement can find it.
    sigset_t childSignal;
    ::sigemptyset(&childSignal);
    ::sigaddset(&childSignal, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &childSignal, nullptr);
    const int childFd = ::signalfd(-1, &childSignal, SFD_CLOEXEC | SFD_NONBLOCK);
    if (childFd < 0)
        failJob(failureFd, "identity", kExitIdentity, errnoText("signalfd", errno));
    if (::send(controlFd, "r", 1, MSG_NOSIGNAL) != 1)
        ::_exit(kExitIdentity);
    ::close(failureFd);
    for (;;) {
        pollfd ready[2] = {{controlFd, POLLIN, 0}, {childFd, POLLIN, 0}};
        if (::poll(ready, 2, -1) < 0)
            continue;
        if (ready[1].revents) {
            signalfd_siginfo info;
            while (::read(childFd, &info, sizeof info) > 0) { }
            while (::waitpid(-1, nullptr, WNOHANG) > 0) { }
        }
        if (!ready[0].revents)
            continue;
        char arm = 0;
        std::vector<int> received;
        const ssize_t n = receiveWithFds(controlFd, &arm, 1, received, 1);
        if (n == 0)
            ::_exit(0); // the monitor is gone
        if (n < 0) {
            if (errno == EINTR || errno == EMSGSIZE)
                continue;
            ::_exit(kExitIdentity);
        }
        if (n != 1 || arm != 'a' || received.size() != 1) {
            closeAll(received);
            continue;
        }
        const pid_t shepherd = ::fork();
        if (shepherd == 0) {
            ::close(childFd);
            runShepherd(policy, seccomp, received[0], controlFd);
        }
        closeAll(received);
    }
}

} // namespace cmcp::jail
