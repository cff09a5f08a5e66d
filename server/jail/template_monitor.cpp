// The template's monitor and its per-call helpers (see template.h). Host root, outside every
// namespace: the only processes of a template that may create cgroups and move tasks into them.
#include "jail/exit_codes.h"
#include "jail/sender_credentials.h"
#include "posix/DescriptorPassing.h"
#include "jail/monitor.h"
#include "jail/report.h"
#include "jail/template.h"

#include "WriteAll.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace cmcp::jail {

std::string comparablePolicy(const std::string &policyText)
{
    nlohmann::json doc = nlohmann::json::parse(policyText, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return {};
    doc.erase("uid");
    doc.erase("gid");
    if (auto env = doc.find("env"); env != doc.end() && env->is_object())
        env->erase("CMCP_RESULT_FD");
    if (auto cgroup = doc.find("cgroup"); cgroup != doc.end() && cgroup->is_object())
        cgroup->erase("name");
    return doc.dump();
}

namespace {

using Clock = std::chrono::steady_clock;
namespace protocol = template_protocol;

// A request or its answer that does not come within this is given up.
constexpr int kPlacementTimeoutMs = 10000;
// After the call was killed, how long its shepherd may take to say so.
constexpr int kKilledReportTimeoutMs = 3000;
constexpr std::uint32_t kMostPolicyBytes = 1u << 20;
constexpr std::uint32_t kMostArgvBytes = 16u << 20;
constexpr unsigned kMostCallNamespaces = 8192;
// Call processes kept made and placed ahead of their calls, per template.
constexpr std::size_t kArmedAhead = 4;
// Arming moves a process into a cgroup, which on cgroup v1 stalls every fork and exit on the
// machine for an RCU grace period and takes CPU: right after a connection was taken, the call
// it brings is running. While this many are still armed, a replacement waits until no
// connection was taken for kArmQuietMs.
constexpr std::size_t kArmedLow = 2;
constexpr int kArmQuietMs = 40;

struct Template
{
    const Policy &policy;
    std::string comparable;
    const TemplateOptions &options;
    pid_t pid = -1;
    int controlFd = -1;
};

std::uint64_t millisecondsSince(Clock::time_point start)
{
    return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

void tell(int client, const std::string &line)
{
    const std::string text = line + "\n";
    writeAll(client, text.data(), text.size());
}

bool readExactly(int fd, char *data, std::size_t size)
{
    while (size > 0) {
        const ssize_t n = ::read(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// Polls one descriptor; false on timeout.
bool readable(int fd, int timeoutMs)
{
    pollfd p{fd, POLLIN, 0};
    int n;
    do
        n = ::poll(&p, 1, timeoutMs);
    while (n < 0 && errno == EINTR);
    return n > 0;
}

// How the call or the template ended, from its wait status and its cgroup's counters.
void recordEnd(ExitRecord &record, int status, const CgroupStats &stats)
{
    if (WIFEXITED(status))
        record.exitCode = WEXITSTATUS(status);
    else
        record.signal = WTERMSIG(status);
    record.cpuMs = stats.cpuNanoseconds.value_or(0) / 1000000;
    if (stats.peakMemoryBytes)
        record.peakMemoryKb = *stats.peakMemoryBytes / 1024;
    record.oomKilled = stats.oomKilled;
}

std::string orDash(const std::optional<std::uint64_t> &v)
{
    return v ? std::to_string(*v) : "-";
}

// The monitor's end of what its helpers tell it: a helper that takes a connection writes its
// pid here ("no longer armed").
struct HelperChannels
{
    int listenFd = -1;
    int takenFd = -1; // write end
    int disarmedFd = -1; // read end: end-of-file when the template retires or stops
};

// A helper: arms a call process (its cgroup, its shepherd, placed), takes the next connection
// and serves that call. Exits when the call has ended and its end was told to the client, or
// when disarmed first.
[[noreturn]] void armAndServe(const Template &t, const HelperChannels &channels)
{
    // --- armed: a call process placed in its cgroup, waiting ----------------------------
    JobCgroup cgroup;
    std::string error;
    if (t.policy.wants(Layer::Cgroup)) {
        Policy named = t.policy;
        named.cgroup->name = "call-" + std::to_string(::getpid());
        if (!createCgroup(named, ::getpid(), cgroup, error))
            ::_exit(1);
    }
    const auto giveUp = [&cgroup](int code) {
        killCgroup(cgroup);
        removeCgroup(cgroup);
        ::_exit(code);
    };
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        giveUp(1);
    const int on = 1;
    ::setsockopt(pair[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    const bool armed = sendWithFds(t.controlFd, "a", 1, {pair[1]});
    ::close(pair[1]);
    const int callFd = pair[0];
    char byte = 0;
    pid_t callPid = 0;
    if (!armed || !readable(callFd, kPlacementTimeoutMs)
        || receiveWithSender(callFd, &byte, 1, callPid) != 1 || byte != 'c' || callPid <= 0)
        giveUp(1);
    if (t.policy.wants(Layer::Cgroup) && !enterCgroup(cgroup, callPid, error)) {
        ::kill(callPid, SIGKILL);
        giveUp(1);
    }
    if (::send(callFd, "p", 1, MSG_NOSIGNAL) != 1)
        giveUp(1);
    int client = -1;
    while (client < 0) {
        pollfd p[3] = {{channels.listenFd, POLLIN, 0},
                       {channels.disarmedFd, POLLIN, 0},
                       {callFd, POLLIN, 0}};
        if (::poll(p, 3, -1) < 0)
            continue;
        if (p[1].revents || p[2].revents)
            giveUp(0); // retired, or the call process is gone (the template died)
        client = ::accept4(channels.listenFd, nullptr, nullptr, SOCK_CLOEXEC);
    }
    const pid_t self = ::getpid();
    (void)!::write(channels.takenFd, &self, sizeof self);
    ::close(channels.listenFd);
    ::close(channels.disarmedFd);
    ::close(channels.takenFd);
    // Not taken, nothing of the call ran: the client starts it cold.
    const auto decline = [&](const std::string &reason) {
        std::string line = reason;
        std::replace(line.begin(), line.end(), '\n', ' ');
        tell(client, "U " + line);
        ::close(client);
        giveUp(0);
    };

    // --- the call ------------------------------------------------------------------------
    ucred peer{};
    socklen_t peerSize = sizeof peer;
    if (::getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &peerSize) != 0
        || peer.uid != ::geteuid())
        giveUp(0); // only the daemon (root) may hand calls to a template
    protocol::Request request;
    std::vector<int> fds;
    const ssize_t n = receiveWithFds(client, &request, sizeof request, fds, 4);
    const std::size_t expectedFds = request.passFd >= 0 ? 4 : 3;
    if (n != static_cast<ssize_t>(sizeof request) || fds.size() != expectedFds
        || request.policyBytes > kMostPolicyBytes || request.argvBytes > kMostArgvBytes
        || (request.passFd >= 0 && (request.passFd <= 2 || request.passFd >= 512)))
        decline("malformed request");
    std::string payload(std::size_t(request.policyBytes) + request.argvBytes, '\0');
    if (!readExactly(client, payload.data(), payload.size()))
        decline("the request ended early");
    const std::string policyText = payload.substr(0, request.policyBytes);
    Policy call;
    if (!parsePolicy(policyText, call, error))
        decline("policy: " + error);
    if (comparablePolicy(policyText) != t.comparable)
        decline("the call's policy is not the template's");
    const TemplateOptions &pool = t.options;
    if (call.uid < pool.uidFirst || call.uid - pool.uidFirst >= pool.uidCount
        || call.uid == t.policy.uid || call.gid != t.policy.gid)
        decline("uid " + std::to_string(call.uid) + " is not one of the template's pool");
    const int memfd = ::memfd_create("cmcp-call", MFD_CLOEXEC);
    if (memfd < 0 || writeAll(memfd, payload.data(), payload.size()) != payload.size())
        decline(errnoText("memfd", errno));
    protocol::Fork fork{request.passFd, request.policyBytes, request.argvBytes, call.uid, call.gid};
    std::vector<int> handed{memfd};
    handed.insert(handed.end(), fds.begin(), fds.end());
    const bool sent = sendWithFds(callFd, &fork, sizeof fork, handed);
    ::close(memfd);
    closeAll(fds);
    if (!sent)
        decline(errnoText("the template's call process is gone", errno));
    const auto started = Clock::now();

    ExitRecord record;
    std::string failure;
    int status = 0;
    bool ended = false;
    bool clientOpen = true;
    auto killCall = [&] {
        if (!record.killed)
            record.killed = true;
        killCgroup(cgroup);
    };
    while (!ended) {
        pollfd p[2] = {{callFd, POLLIN, 0}, {client, POLLIN, 0}};
        const int ready =
                ::poll(p, clientOpen ? 2 : 1, record.killed ? kKilledReportTimeoutMs : -1);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0) {
            status = SIGKILL; // the shepherd did not report: the call counts as killed
            break;
        }
        if (p[0].revents) {
            char message[65536];
            const ssize_t got = ::recv(callFd, message, sizeof message, 0);
            if (got <= 0) {
                // The template died, and its calls with it.
                killCall();
                status = SIGKILL;
                break;
            }
            if (message[0] == 's') {
                tell(client, "S " + std::to_string(callPid));
            } else if (message[0] == 'f') {
                failure.assign(message + 1, static_cast<std::size_t>(got - 1));
                if (failure.empty())
                    failure = "exec\nthe call failed before its exec";
            } else if (message[0] == 'x' && got == 1 + static_cast<ssize_t>(sizeof status)) {
                std::memcpy(&status, message + 1, sizeof status);
                ended = true;
            }
        }
        if (clientOpen && p[1].revents) {
            char request = 0;
            const ssize_t got = ::read(client, &request, 1);
            if (got <= 0)
                clientOpen = false; // the client is gone: nobody waits for this call
            if (got <= 0 || request == 'k')
                killCall();
        }
    }
    record.wallMs = millisecondsSince(started);
    // Whatever the call left behind. A call that ended on its own leaves nothing: the call
    // process was the init of its pid namespace, and the shepherd reaped it only after the
    // kernel had killed and reaped every process of that namespace (and of those below it),
    // which no process of the call can leave. The lists are read to be sure; the kill itself
    // (cgroup.kill takes cgroup_mutex, held through an RCU grace period by any task migration
    // on the machine, the next arm's among them: 6.5 ms measured) only when one is not empty.
    if (!ended || record.killed || cgroupHoldsTasks(cgroup))
        killCgroup(cgroup);
    const CgroupStats stats = cgroupStats(cgroup);
    // The cgroup goes once the client has its answer: removing it waits for the kernel to
    // finish the call's tasks, which the answer need not.
    const auto finish = [&cgroup] {
        removeCgroup(cgroup);
        ::_exit(0);
    };
    const int exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (!failure.empty()) {
        const std::size_t nl = failure.find('\n');
        const std::string layer = nl == std::string::npos ? "exec" : failure.substr(0, nl);
        const std::string message = nl == std::string::npos ? failure : failure.substr(nl + 1);
        tell(client, "R " + std::to_string(exitStatus) + "\t" + layer + "\t" + message);
        ::close(client);
        finish();
    }
    recordEnd(record, status, stats);
    tell(client,
         "E " + (record.exitCode ? std::to_string(*record.exitCode) : "-") + " "
                 + (record.signal ? std::to_string(*record.signal) : "-") + " "
                 + std::to_string(record.wallMs) + " " + std::to_string(record.cpuMs) + " "
                 + orDash(record.peakMemoryKb) + " " + (record.oomKilled ? "1" : "0") + " "
                 + (record.killed ? "1" : "0"));
    ::close(client);
    finish();
    ::_exit(0); // finish does not return
}

int listenOn(const std::string &path, std::string &error)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) {
        error = "socket path " + path + ": longer than "
                + std::to_string(sizeof address.sun_path - 1) + " bytes";
        return -1;
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = errnoText("socket", errno);
        return -1;
    }
    ::unlink(path.c_str()); // a template of an earlier daemon that died
    const mode_t old = ::umask(077);
    const int bound = ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
    const int err = errno;
    ::umask(old);
    if (bound != 0 || ::listen(fd, 128) != 0) {
        error = errnoText("listening on " + path, bound != 0 ? err : errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

} // namespace

void runTemplateMonitor(const Policy &policy, const std::string &policyText,
                        const SeccompProgram &seccomp, const TemplateOptions &options, char **argv)
{
    (void)argv; // the template runs no program of its own; each call names its own
    if (!policy.wants(Layer::Namespaces) || !policy.wants(Layer::Identity))
        refuse("template", kExitUsage, "a template needs the identity and namespaces layers");
    if (options.uidCount == 0 || policy.uid < options.uidFirst
        || policy.uid - options.uidFirst >= options.uidCount)
        refuse("template", kExitUsage, "the policy's uid is not in --template-uids");
    if (::geteuid() != 0)
        refuse("template", kExitIdentity, "a template needs a root monitor (it maps the pool)");

    const sigset_t signals = monitoredSignals();
    ::sigprocmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    const pid_t supervisor = ::getppid();
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0 || ::getppid() != supervisor)
        refuse("identity", kExitIdentity, "the supervisor is gone or cannot be watched");
    const int signalFd = ::signalfd(-1, &signals, SFD_CLOEXEC);
    int control[2], go[2], failure[2];
    if (signalFd < 0 || ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, control) != 0
        || ::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(failure, O_CLOEXEC) != 0)
        refuse("identity", kExitIdentity, errnoText("signalfd/socketpair/pipe2", errno));

    const auto started = Clock::now();
    const int workspaceErrno = enterWorkspace(policy);
    const pid_t pid = cloneProcess(cloneFlags(policy));
    if (pid < 0)
        refuse("namespaces", kExitNamespaces, errnoText("clone", errno));
    if (pid == 0) {
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::signal(SIGPIPE, SIG_DFL);
        ::close(go[1]);
        ::close(failure[0]);
        ::close(control[0]);
        ::close(signalFd);
        if (!readFromMonitor(go[0], 'g'))
            ::_exit(kExitIdentity);
        Launch launch{go[0], -1, -1, workspaceErrno};
        // One user namespace per call process (only shepherds can make them: a call's own
        // namespace allows none). Not the pool's size: a namespace outlives its last process
        // for a while (the kernel frees it later), and a limit reached fails the next arm.
        launch.nestedUserNamespaces = kMostCallNamespaces;
        runTemplateProcess(policy, seccomp, launch, control[1], failure[1]);
    }
    (void)!::chdir("/");
    ::close(go[0]);
    ::close(failure[1]);
    ::close(control[1]);

    JobCgroup cgroup;
    std::string error;
    auto abandon = [&](const char *layer, int code, const std::string &message) {
        ::kill(pid, SIGKILL);
        killCgroup(cgroup);
        ::waitpid(pid, nullptr, 0);
        removeCgroup(cgroup);
        refuse(layer, code, message);
    };
    // The pool's uids, each as itself, and the pool's gid: the template may switch a call's
    // user namespace to any of them, and to nothing else of the host.
    if (!writeIdMap(pid, options.uidFirst, options.uidFirst, options.uidCount, policy.gid,
                    policy.gid, error))
        abandon("namespaces", kExitNamespaces, error);
    (void)!::write(go[1], "g", 1);
    if (policy.wants(Layer::Cgroup)
        && !(createCgroup(policy, ::getpid(), cgroup, error) && enterCgroup(cgroup, pid, error)))
        abandon("cgroup", kExitCgroup, error);
    (void)!::write(go[1], "p", 1);

    // Ready ('r' on the control socket), or failed (its reason on the failure pipe).
    {
        pollfd p[2] = {{control[0], POLLIN, 0}, {failure[0], POLLIN, 0}};
        char byte = 0;
        const int ready = ::poll(p, 2, 60000);
        if (ready <= 0 || !(p[0].revents & POLLIN) || ::recv(control[0], &byte, 1, 0) != 1
            || byte != 'r') {
            std::string failed;
            char buf[4096];
            ssize_t got;
            while ((got = ::read(failure[0], buf, sizeof buf)) > 0)
                failed.append(buf, static_cast<std::size_t>(got));
            const std::size_t nl = failed.find('\n');
            int status = 0;
            ::waitpid(pid, &status, 0);
            removeCgroup(cgroup);
            const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitNamespaces;
            if (nl == std::string::npos)
                refuse("template", code, failed.empty() ? "the template did not start" : failed);
            reportRefused(failed.substr(0, nl), code, failed.substr(nl + 1));
            ::_exit(code);
        }
    }
    const int listenFd = listenOn(options.socketPath, error);
    if (listenFd < 0)
        abandon("template", kExitUsage, error);
    std::vector<std::string> layers;
    for (Layer l : policy.layers)
        layers.push_back(layerName(l));
    reportStarted(pid, layers, cgroup.dirs);

    const Template t{policy, comparablePolicy(policyText), options, pid, control[0]};
    // Armed helpers wait in accept on the one listening socket: non-blocking, so that the
    // ones that lose a connection to another go back to waiting.
    ::fcntl(listenFd, F_SETFL, ::fcntl(listenFd, F_GETFL) | O_NONBLOCK);
    int taken[2], disarm[2];
    if (::pipe2(taken, O_CLOEXEC | O_NONBLOCK) != 0 || ::pipe2(disarm, O_CLOEXEC) != 0)
        abandon("template", kExitIdentity, errnoText("pipe2", errno));
    const HelperChannels channels{listenFd, taken[1], disarm[0]};
    std::vector<pid_t> armedHelpers;
    auto armFailedAt = Clock::now() - std::chrono::seconds(10);
    auto lastTakenAt = Clock::now() - std::chrono::seconds(10);
    int helpers = 0;
    bool templateEnded = false, stopping = false;
    int status = 0;
    rusage usage{};
    auto reap = [&] {
        for (;;) {
            int s = 0;
            const pid_t done = ::wait4(-1, &s, WNOHANG, &usage);
            if (done <= 0)
                return;
            if (done == pid) {
                templateEnded = true;
                status = s;
                continue;
            }
            --helpers;
            if (std::erase(armedHelpers, done) > 0)
                armFailedAt = Clock::now(); // it ended before its call came
        }
    };
    // Standard input closing retires the template (the daemon's policy changed): no new call,
    // the calls in flight end as they would. SIGTERM ends it at once, calls in flight included.
    bool retiring = false;
    while (!templateEnded && !stopping && !(retiring && helpers == 0)) {
        // kArmedAhead armed at all times; after a helper ended before its call came (it could
        // not make or place its call process), none for a second, so a broken template does
        // not spin.
        const auto now = Clock::now();
        const bool armingPaused = now - armFailedAt < std::chrono::seconds(1);
        const auto quietFor = now - lastTakenAt;
        const bool quiet = armedHelpers.size() < kArmedLow
                || quietFor >= std::chrono::milliseconds(kArmQuietMs);
        if (!retiring && !armingPaused && quiet && armedHelpers.size() < kArmedAhead) {
            const pid_t helper = ::fork();
            if (helper == 0) {
                ::close(signalFd);
                ::close(taken[0]);
                ::close(disarm[1]);
                // No parent-death signal: when the monitor dies, an armed helper sees the
                // disarm pipe close and a serving one its call end with the template, and
                // either removes its cgroup before it goes.
                armAndServe(t, channels);
            }
            if (helper > 0) {
                ++helpers;
                armedHelpers.push_back(helper);
            }
            continue;
        }
        pollfd p[3] = {{signalFd, POLLIN, 0}, {taken[0], POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
        const bool wantArm = !retiring && armedHelpers.size() < kArmedAhead;
        int timeoutMs = -1;
        if (wantArm && armingPaused)
            timeoutMs = 100;
        else if (wantArm) // not quiet yet
            timeoutMs = 1 + kArmQuietMs
                    - int(std::chrono::duration_cast<std::chrono::milliseconds>(quietFor).count());
        if (::poll(p, retiring ? 2 : 3, timeoutMs) < 0)
            continue;
        if (p[0].revents) {
            signalfd_siginfo info{};
            if (::read(signalFd, &info, sizeof info) == sizeof info && info.ssi_signo != SIGCHLD)
                stopping = true;
            reap();
        }
        if (p[1].revents) {
            pid_t helper = 0;
            while (::read(taken[0], &helper, sizeof helper) == sizeof helper) {
                std::erase(armedHelpers, helper);
                lastTakenAt = Clock::now();
            }
        }
        if (!retiring && p[2].revents) {
            char byte;
            if (::read(STDIN_FILENO, &byte, 1) <= 0) {
                retiring = true;
                ::unlink(options.socketPath.c_str());
                ::close(listenFd);
                ::close(disarm[1]); // the armed helpers end
            }
        }
    }
    // No new call from here on; calls still in flight die with the template (its pid
    // namespace) and their helpers report them.
    if (!retiring) {
        ::unlink(options.socketPath.c_str());
        ::close(listenFd);
        ::close(disarm[1]);
    }
    ::kill(pid, SIGKILL);
    killCgroup(cgroup);
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while ((!templateEnded || helpers > 0) && Clock::now() < deadline) {
        pollfd p{signalFd, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
            signalfd_siginfo info{};
            (void)!::read(signalFd, &info, sizeof info);
        }
        reap();
    }
    ExitRecord record;
    record.killed = stopping;
    record.wallMs = millisecondsSince(started);
    const CgroupStats stats = cgroupStats(cgroup);
    removeCgroup(cgroup);
    recordEnd(record, status, stats);
    reportExit(record);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

} // namespace cmcp::jail
