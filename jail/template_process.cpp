// The template process and the cells it clones, up to the exec of each cell's program (see
// template.h). Everything here runs inside the template's namespaces as uid 1000 of its user
// namespace; none of it runs a call's code.
#include "jail/exit_codes.h"
#include "jail/monitor.h"
#include "jail/report.h"
#include "jail/sender_credentials.h"
#include "jail/template.h"
#include "posix/DescriptorPassing.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

namespace cmcp::jail {

namespace {

namespace protocol = template_protocol;

// What a cell's program keeps across its exec, as ambient capabilities of the template's user
// namespace, and all it may ever hold (the bounding set keeps nothing else): enough to switch a
// call to its uid (setuid, setgid), to kill what a call left (kill) and to empty the /tmp and
// /dev/shm it wrote whatever the modes (dac_override, fowner). Nothing to mount, to trace or to
// reach the network's configuration.
constexpr int kCellCapabilities[] = {CAP_SETUID, CAP_SETGID, CAP_KILL, CAP_DAC_OVERRIDE,
                                     CAP_FOWNER};

// Sends "f<layer>\n<message>" to the monitor on the cell's socket and ends the cell.
[[noreturn]] void cellFails(int socket, const std::string &layer, int code,
                            const std::string &message)
{
    writeRefusalLine(layer, message);
    const std::string text = "f" + layer + "\n" + message;
    (void)!::send(socket, text.data(), text.size(), MSG_NOSIGNAL);
    ::_exit(code);
}

// The template's own identity: uid and gid 1000 of its user namespace (its pool uid and the
// pool's gid on the host), keeping that namespace's capabilities (no uid 0 is mapped, so the
// switch clears none), not dumpable, dying with the monitor.
bool becomeTemplate(const Launch &launch, std::string &error)
{
    if (::setgroups(0, nullptr) != 0) {
        error = errnoText("setgroups(0)", errno);
        return false;
    }
    if (::setresgid(kInsideId, kInsideId, kInsideId) != 0
        || ::setresuid(kInsideId, kInsideId, kInsideId) != 0) {
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

// Puts `fds` at `first`, `first + 1`, ... without their close-on-exec flag, and closes every
// other descriptor.
bool placeDescriptors(std::vector<int> fds, int first, std::string &error)
{
    // Out of the way first, so that no target number is a source still needed.
    constexpr int kParking = 1000;
    for (int &fd : fds) {
        const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, kParking);
        if (moved < 0) {
            error = errnoText("fcntl(F_DUPFD)", errno);
            return false;
        }
        fd = moved;
    }
    if (::close_range(3, kParking - 1, 0) != 0) {
        error = errnoText("close_range", errno);
        return false;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
        if (::dup2(fds[i], first + int(i)) < 0) {
            error = errnoText("dup2", errno);
            return false;
        }
    }
    if (::close_range(first + unsigned(fds.size()), ~0u, 0) != 0) {
        error = errnoText("close_range", errno);
        return false;
    }
    return true;
}

// kCellCapabilities as ambient capabilities (inheritable first, which ambient requires), and
// nothing else in the bounding set, so that no exec can ever grant more.
bool keepCellCapabilities(std::string &error)
{
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capget, &header, data) != 0) {
        error = errnoText("capget", errno);
        return false;
    }
    std::uint64_t keep = 0;
    for (const int cap : kCellCapabilities)
        keep |= std::uint64_t(1) << cap;
    data[0].inheritable = std::uint32_t(keep);
    data[1].inheritable = std::uint32_t(keep >> 32);
    if (::syscall(SYS_capset, &header, data) != 0) {
        error = errnoText("capset (inheritable)", errno);
        return false;
    }
    for (const int cap : kCellCapabilities)
        if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) {
            error = errnoText("prctl(PR_CAP_AMBIENT_RAISE, " + std::to_string(cap) + ")", errno);
            return false;
        }
    for (int cap = 0; cap < 64; ++cap) {
        if ((keep >> cap) & 1 || ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) <= 0)
            continue;
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
            error = errnoText("prctl(PR_CAPBSET_DROP, " + std::to_string(cap) + ")", errno);
            return false;
        }
    }
    return true;
}

// A cell: the init of its own pid namespace, in its own mount (and network) namespace. Placed
// in its cgroup by the monitor, it builds its scratch mounts and execs the program, which loads
// the zygote library and serves calls from then on.
[[noreturn]] void runCell(const Policy &policy, int library, char **program,
                          const std::vector<int> &fds)
{
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGCHLD, SIG_DFL);
    const int socket = fds[0];
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    char placed = 0;
    if (!sendNamingProcess(socket, 'p', ::getpid()) || ::recv(socket, &placed, 1, 0) != 1
        || placed != 'g')
        ::_exit(kExitCgroup); // the monitor gave up on this cell
    std::string error;
    if (!enterCgroupNamespace(error))
        cellFails(socket, "namespaces", kExitNamespaces, error);
    if (!enterCellNamespaces(policy, error))
        cellFails(socket, "namespaces", kExitNamespaces, error);
    std::vector<int> kept{library};
    kept.insert(kept.end(), fds.begin(), fds.end());
    if (!placeDescriptors(kept, kZygoteLibraryFd, error))
        cellFails(kCellSocketFd, "identity", kExitIdentity, error);
    if (!keepCellCapabilities(error))
        cellFails(kCellSocketFd, "identity", kExitIdentity, error);
    const Launch launch{};
    if (enterWorkdir(policy, launch, error))
        execJob(policy, launch, program, error);
    cellFails(kCellSocketFd, "exec", kExitExec, error);
}

} // namespace

void runTemplateProcess(const Policy &policy, Launch launch, char **program, int controlFd,
                        int failureFd)
{
    std::string error;
    const int library = launch.programFd;
    launch.programFd = -1;
    holdWorkspace(launch);
    if (!becomeTemplate(launch, error))
        failJob(failureFd, "identity", kExitIdentity, error);
    if (!enterMinimalRoot(policy, launch, error))
        failJob(failureFd, "namespaces", kExitNamespaces, error);
    if (!awaitPlacement(launch, error))
        failJob(failureFd, "cgroup", kExitCgroup, error);
    if (!enterCgroupNamespace(error))
        failJob(failureFd, "namespaces", kExitNamespaces, error);
    if (launch.workspaceFd >= 0)
        ::close(launch.workspaceFd); // cells reach the workspace by its path inside
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

    // Every call of the template has its policy: its network too.
    int cellFlags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC;
    if (!policy.namespaces->network)
        cellFlags |= CLONE_NEWNET;
    std::map<pid_t, std::uint32_t> cells;
    for (;;) {
        pollfd ready[2] = {{controlFd, POLLIN, 0}, {childFd, POLLIN, 0}};
        if (::poll(ready, 2, -1) < 0)
            continue;
        if (ready[1].revents) {
            signalfd_siginfo info;
            while (::read(childFd, &info, sizeof info) > 0) { }
            pid_t done;
            while ((done = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
                const auto found = cells.find(done);
                if (found == cells.end())
                    continue;
                protocol::CellEnded ended;
                ended.cell = found->second;
                (void)!::send(controlFd, &ended, sizeof ended, MSG_NOSIGNAL);
                cells.erase(found);
            }
        }
        if (!ready[0].revents)
            continue;
        protocol::MakeCell request;
        std::vector<int> received;
        const ssize_t n = receiveWithFds(controlFd, &request, sizeof request, received, 64);
        if (n == 0)
            ::_exit(0); // the monitor is gone
        if (n < 0) {
            if (errno == EINTR || errno == EMSGSIZE)
                continue;
            ::_exit(kExitIdentity);
        }
        if (n != ssize_t(sizeof request) || request.kind != 'n'
            || received.size() != 2 + request.counters) {
            closeAll(received);
            continue;
        }
        const pid_t cell = cloneProcess(cellFlags);
        if (cell == 0) {
            ::close(childFd);
            ::close(controlFd);
            runCell(policy, library, program, received);
        }
        if (cell > 0)
            cells[cell] = request.cell;
        // Without a clone the cell's socket closes here: the monitor sees it end unready.
        closeAll(received);
    }
}

} // namespace cmcp::jail
