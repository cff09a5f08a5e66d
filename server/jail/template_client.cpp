// The daemon's job process for a call a template serves (see template.h): hands the call over
// and stands in for it, so that the daemon supervises it exactly as a job built cold: the same
// report records, the same exit status, SIGTERM kills it.
#include "jail/exit_codes.h"
#include "posix/DescriptorPassing.h"
#include "jail/report.h"
#include "jail/template.h"

#include "WriteAll.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace cmcp::jail {

namespace {

namespace protocol = template_protocol;

int connectTo(const std::string &path)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path)
        return -1;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

std::optional<std::uint64_t> number(const std::string &word)
{
    if (word == "-" || word.empty())
        return std::nullopt;
    return std::stoull(word);
}

// "E <exit|-> <signal|-> <wall_ms> <cpu_ms> <peak_kb|-> <oom> <killed>" as the exit record.
[[noreturn]] void reportEnd(const std::string &fields)
{
    std::istringstream in(fields);
    std::string exitCode, signal, wall, cpu, peak, oom, killed;
    in >> exitCode >> signal >> wall >> cpu >> peak >> oom >> killed;
    ExitRecord record;
    if (auto v = number(exitCode))
        record.exitCode = static_cast<int>(*v);
    if (auto v = number(signal))
        record.signal = static_cast<int>(*v);
    record.wallMs = number(wall).value_or(0);
    record.cpuMs = number(cpu).value_or(0);
    record.peakMemoryKb = number(peak);
    record.oomKilled = oom == "1";
    record.killed = killed == "1";
    reportExit(record);
    ::_exit(record.exitCode ? *record.exitCode : 128 + record.signal.value_or(SIGKILL));
}

} // namespace

void runViaTemplate(const std::string &socketPath, const Policy &policy,
                    const std::string &policyText, char **argv, int passFd)
{
    const int fd = connectTo(socketPath);
    if (fd < 0)
        return; // no template (yet, or any more): the job starts cold
    std::string arguments;
    for (char **a = argv; *a; ++a) {
        arguments += *a;
        arguments += '\0';
    }
    protocol::Request request;
    request.policyBytes = static_cast<std::uint32_t>(policyText.size());
    request.argvBytes = static_cast<std::uint32_t>(arguments.size());
    request.passFd = passFd;
    std::vector<int> fds{STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO};
    if (passFd >= 0)
        fds.push_back(passFd);
    const std::string payload = policyText + arguments;
    if (!sendWithFds(fd, &request, sizeof request, fds)
        || writeAll(fd, payload.data(), payload.size()) != payload.size()) {
        ::close(fd);
        return;
    }

    // From here the call may run: a kill request (the daemon's SIGTERM) goes to the helper, and
    // the daemon's death is one too.
    sigset_t signals, previous;
    ::sigemptyset(&signals);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT})
        ::sigaddset(&signals, s);
    ::sigprocmask(SIG_BLOCK, &signals, &previous);
    const pid_t supervisor = ::getppid();
    ::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    if (::getppid() != supervisor)
        ::raise(SIGTERM); // taken by the signalfd below
    const int signalFd = ::signalfd(-1, &signals, SFD_CLOEXEC);
    bool started = false;
    std::string pending;
    for (;;) {
        pollfd p[2] = {{fd, POLLIN, 0}, {signalFd, POLLIN, 0}};
        if (::poll(p, signalFd >= 0 ? 2 : 1, -1) < 0)
            continue;
        if (signalFd >= 0 && p[1].revents) {
            signalfd_siginfo info{};
            (void)!::read(signalFd, &info, sizeof info);
            (void)!::send(fd, "k", 1, MSG_NOSIGNAL);
        }
        if (!p[0].revents)
            continue;
        char buf[4096];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            writeRefusalLine("template", "the template ended before it reported the job's end");
            ::_exit(kExitExec);
        }
        pending.append(buf, static_cast<std::size_t>(n));
        std::size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
            const std::string line = pending.substr(0, nl);
            pending.erase(0, nl + 1);
            const char kind = line.empty() ? '?' : line[0];
            const std::string rest = line.size() > 2 ? line.substr(2) : std::string();
            if (kind == 'U' && !started) {
                // Not taken, nothing ran: back to the state before, for the cold start.
                ::close(fd);
                if (signalFd >= 0)
                    ::close(signalFd);
                ::prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
                ::sigprocmask(SIG_SETMASK, &previous, nullptr);
                return;
            }
            if (kind == 'S') {
                started = true;
                std::vector<std::string> layers;
                for (Layer l : policy.layers)
                    layers.push_back(layerName(l));
                reportStarted(static_cast<pid_t>(std::stol(rest)), layers);
            } else if (kind == 'R') {
                const std::size_t tab1 = rest.find('\t');
                const std::size_t tab2 = rest.find('\t', tab1 + 1);
                const int code = std::stoi(rest.substr(0, tab1));
                reportRefused(rest.substr(tab1 + 1, tab2 - tab1 - 1), code, rest.substr(tab2 + 1));
                ::_exit(code);
            } else if (kind == 'E') {
                reportEnd(rest);
            }
        }
    }
}

} // namespace cmcp::jail
