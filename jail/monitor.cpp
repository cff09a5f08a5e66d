// The monitor (see monitor.h). Single-threaded; every signal it cares about is blocked and
// taken synchronously from a signalfd, so there is no handler and no race between "the job
// exited" and "the supervisor asked to kill it". The same poll answers the seccomp filter's
// notifications (seccomp_denials.h), so a denied call never waits on anything else.
#include "jail/monitor.h"

#include "jail/exit_codes.h"
#include "jail/report.h"
#include "jail/seccomp_denials.h"
#include "posix/DescriptorPassing.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace cmcp::jail {

namespace {

using Clock = std::chrono::steady_clock;

struct Pipe
{
    int read = -1, write = -1;
};

Pipe makePipe()
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        refuse("identity", kExitIdentity, errnoText("pipe2", errno));
    return {fds[0], fds[1]};
}

// A socket pair for the seccomp listener: read is the monitor's end, write the job's.
Pipe makeListenerChannel()
{
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        refuse("seccomp", kExitSeccomp, errnoText("socketpair", errno));
    return {fds[0], fds[1]};
}

// The job process, right after clone: restore what the monitor changed for itself, wait for
// the monitor's go (its id maps are written), then run the layers.
[[noreturn]] void startJob(JobProcess &job, Pipe go, JobBody body)
{
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::close(go.write);
    if (!readFromMonitor(go.read, 'g'))
        ::_exit(kExitIdentity); // the monitor is gone: nothing may run unmonitored
    job.launch.monitorAliveFd = go.read;
    body(job);
    ::_exit(kExitExec); // body only returns by mistake
}

void killJob(pid_t pid, const JobCgroup &cgroup)
{
    // The pid-namespace init takes every process of its namespace with it; without a pid
    // namespace, the job's session; the cgroup catches whatever else it holds.
    ::kill(pid, SIGKILL);
    ::kill(-pid, SIGKILL);
    killCgroup(cgroup);
}

// Everything the job process wrote on its pipe before it failed (empty after a good exec).
std::string drain(int fd)
{
    std::string text;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return text;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > 65536)
            return text;
    }
}

} // namespace

sigset_t monitoredSignals()
{
    sigset_t set;
    ::sigemptyset(&set);
    for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT})
        ::sigaddset(&set, s);
    return set;
}

pid_t cloneProcess(int flags)
{
    return static_cast<pid_t>(
            ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

bool readFromMonitor(int fd, char expected)
{
    char byte = 0;
    ssize_t n;
    do
        n = ::read(fd, &byte, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 && byte == expected;
}

bool awaitPlacement(const Launch &launch, std::string &error)
{
    if (readFromMonitor(launch.monitorAliveFd, 'p'))
        return true;
    error = "the monitor did not place the job in its cgroup";
    return false;
}

void runMonitor(const Policy &policy, const SeccompProgram &seccomp, char **argv,
                const HandedDescriptors &handed, JobBody body)
{
    const int passFd = handed.passFd;
    const int egressFd = handed.egressFd;
    const sigset_t signals = monitoredSignals();
    ::sigprocmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN); // a vanished supervisor must not kill the monitor mid-report

    // The daemon's death is a kill request too (SIGTERM is caught above, the job dies with it).
    const pid_t supervisor = ::getppid();
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0 || ::getppid() != supervisor)
        refuse("identity", kExitIdentity, "the supervisor is gone or cannot be watched");

    JobCgroup cgroup;
    std::string error;
    Pipe go = makePipe();
    Pipe failure = makePipe();
    const int signalFd = ::signalfd(-1, &signals, SFD_CLOEXEC);
    if (signalFd < 0)
        refuse("identity", kExitIdentity, errnoText("signalfd", errno));
    const bool countDenials = policy.wants(Layer::Seccomp) && seccomp.notifies;
    Pipe listenerChannel = countDenials ? makeListenerChannel() : Pipe{};
    const auto started = Clock::now();
    const int flags = policy.wants(Layer::Namespaces) ? cloneFlags(policy) : 0;
    const int workspaceErrno = enterWorkspace(policy);
    const pid_t pid = cloneProcess(flags);
    if (pid < 0) {
        int err = errno;
        removeCgroup(cgroup);
        refuse(policy.wants(Layer::Namespaces) ? "namespaces" : "identity",
               policy.wants(Layer::Namespaces) ? kExitNamespaces : kExitIdentity,
               errnoText("clone", err));
    }
    if (pid == 0) {
        ::close(failure.read);
        ::close(signalFd);
        if (listenerChannel.read >= 0)
            ::close(listenerChannel.read);
        Launch launch{-1, passFd, egressFd, -1, workspaceErrno};
        launch.workspaceViewFd = handed.workspaceViewFd;
        JobProcess job{policy, seccomp, argv, launch, failure.write, listenerChannel.write};
        startJob(job, go, body);
    }
    // The workspace was the monitor's working directory only for the clone to carry it.
    (void)!::chdir("/");
    ::close(go.read);
    ::close(failure.write);
    if (listenerChannel.write >= 0)
        ::close(listenerChannel.write);
    if (passFd >= 0)
        ::close(passFd); // the job's alone: its reader sees end-of-file when the job is gone
    if (egressFd >= 0)
        ::close(egressFd); // the job's alone too: the supervisor sees end-of-file if it fails
    if (handed.workspaceViewFd >= 0)
        ::close(handed.workspaceViewFd);

    auto abandon = [&](const char *layer, int code, const std::string &message) {
        killJob(pid, cgroup);
        ::waitpid(pid, nullptr, 0);
        removeCgroup(cgroup);
        refuse(layer, code, message);
    };
    if (policy.wants(Layer::Namespaces) && !writeIdMaps(policy, pid, error))
        abandon("namespaces", kExitNamespaces, error);
    // A failed write means the job process already died (EPIPE): it said why on the failure
    // pipe, read below.
    (void)!::write(go.write, "g", 1);
    // The cgroup is made while the job builds its root (cgroup migration is the slowest step
    // on v1 hierarchies); the job waits for "placed" before it seals and execs.
    if (policy.wants(Layer::Cgroup)
        && !(createCgroup(policy, ::getpid(), cgroup, error) && enterCgroup(cgroup, pid, error)))
        abandon("cgroup", kExitCgroup, error);
    (void)!::write(go.write, "p", 1);

    // End-of-file on the failure pipe: the job's exec closed it (success) or the job died.
    std::string failed = drain(failure.read);
    ::close(failure.read);
    // The job sent its filter's listener before its exec, so it is here by now. None (it
    // failed before): its report carries no counts.
    UniqueFd listener;
    if (listenerChannel.read >= 0) {
        bool ended = false;
        listener = receiveDescriptor(listenerChannel.read, &ended);
        ::close(listenerChannel.read);
    }
    if (failed.empty()) {
        std::vector<std::string> layers;
        for (Layer l : policy.layers)
            layers.push_back(layerName(l));
        reportStarted(pid, layers, cgroup.dirs);
    }

    Exit record;
    SeccompDenials denials;
    bool denialsCounted = listener.isValid();
    int status = 0;
    rusage usage{};
    bool reaped = false;
    while (!reaped) {
        pollfd watched[2] = {{signalFd, POLLIN, 0}, {listener.get(), POLLIN, 0}};
        if (::poll(watched, listener.isValid() ? 2 : 1, -1) < 0)
            continue; // EINTR from a stop/continue
        // Denied calls first: each one holds a task of the job until it is answered. A listener
        // that fails is closed, which makes the kernel fail such calls (ENOSYS) rather than
        // hold them, and the report leaves out counts that would be short.
        if (watched[1].revents & POLLIN) {
            if (denials.answerOne(listener.get()) == SeccompDenials::Answer::Broken) {
                listener.reset();
                denialsCounted = false;
            }
        } else if (watched[1].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            listener.reset(); // no task uses the filter any more
        }
        if (!(watched[0].revents & POLLIN))
            continue;
        signalfd_siginfo infos[8];
        const ssize_t n = ::read(signalFd, infos, sizeof infos);
        for (ssize_t i = 0; i < n / ssize_t(sizeof infos[0]); ++i) {
            if (int(infos[i].ssi_signo) != SIGCHLD) {
                record.killed = true;
                killJob(pid, cgroup);
            } else if (::wait4(pid, &status, WNOHANG, &usage) == pid) {
                reaped = true;
            }
        }
    }
    record.wallMs = static_cast<std::int64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count());
    // Whatever the job left behind (background processes without a pid namespace) goes too.
    killJob(pid, cgroup);

    const int exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (!failed.empty()) {
        std::size_t nl = failed.find('\n');
        std::string layer = nl == std::string::npos ? "exec" : failed.substr(0, nl);
        std::string message = nl == std::string::npos ? failed : failed.substr(nl + 1);
        removeCgroup(cgroup);
        reportRefused(layer, exitStatus, message);
        ::_exit(exitStatus);
    }

    CgroupStats stats = cgroupStats(cgroup);
    removeCgroup(cgroup);
    if (WIFEXITED(status))
        record.exitCode = WEXITSTATUS(status);
    else
        record.signal = WTERMSIG(status);
    const auto cpuUs = [](const timeval &t) {
        return std::uint64_t(t.tv_sec) * 1000000 + std::uint64_t(t.tv_usec);
    };
    record.cpuMs = std::int64_t(stats.cpuNanoseconds
                                        ? *stats.cpuNanoseconds / 1000000
                                        : (cpuUs(usage.ru_utime) + cpuUs(usage.ru_stime)) / 1000);
    record.peakMemoryKb = std::int64_t(stats.peakMemoryBytes ? *stats.peakMemoryBytes / 1024
                                                             : std::uint64_t(usage.ru_maxrss));
    record.oomKilled = stats.oomKilled;
    record.pidsRefused = std::int64_t(stats.pidsRefused);
    if (denialsCounted) {
        record.seccompDenied = denials.counts();
        record.seccompDeniedUnnamed = std::int64_t(denials.unnamed());
    }
    reportExit(record);
    ::_exit(exitStatus);
}

} // namespace cmcp::jail
