// The cell's side of the zygote library (template.h): loaded by the cell's program (bash as a
// loadable builtin, zygote_bash.c; python3 through ctypes), it answers the daemon's calls one
// at a time and returns to the program only in each call's process, made into the call, with
// the call's payload.
#include "jail/exit_codes.h"
#include "jail/protocol/CellProtocol.h"
#include "jail/seccomp_denials.h"
#include "jail/template.h"
#include "jail/zygote_call.h"
#include "posix/DescriptorPassing.h"

#include <nlohmann/json.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace cmcp::jail {

namespace {

namespace cells = cell_protocol;

// Directories a call may write that the cell empties before the next (the workspace is the
// calls' own, on purpose).
constexpr const char *kScratchDirectories[] = {"/tmp", "/dev/shm"};

bool readSetup(int fd, CellSetup &setup, std::string &error)
{
    std::string text;
    char buffer[65536];
    ssize_t n;
    while ((n = ::pread(fd, buffer, sizeof buffer, off_t(text.size()))) > 0)
        text.append(buffer, std::size_t(n));
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("policy")) {
        error = "the cell's setup is not JSON";
        return false;
    }
    try {
        if (!parsePolicy(doc.at("policy").dump(), setup.policy, error))
            return false;
        for (const auto &insn : doc.at("seccomp"))
            setup.seccomp.code.push_back(
                    {insn.at(0).get<std::uint16_t>(), insn.at(1).get<std::uint8_t>(),
                     insn.at(2).get<std::uint8_t>(), insn.at(3).get<std::uint32_t>()});
        setup.seccomp.notifies = doc.at("seccomp_notifies").get<bool>();
        setup.poolFirst = doc.at("pool_first").get<uid_t>();
        setup.poolCount = doc.at("pool_count").get<uid_t>();
        setup.templateUid = doc.at("template_uid").get<uid_t>();
        int counterFd = kFirstCounterFd;
        for (const auto &name : doc.at("counters")) {
            // Above the numbers a call's descriptors take, close-on-exec.
            const int fd = ::fcntl(counterFd, F_DUPFD_CLOEXEC, 64);
            ::close(counterFd++);
            if (fd < 0) {
                error = errnoText("a cgroup counter", errno);
                return false;
            }
            setup.counters.push_back({name.get<std::string>(), fd});
        }
    } catch (const nlohmann::json::exception &e) {
        error = std::string("the cell's setup: ") + e.what();
        return false;
    }
    return true;
}

// Removes everything below the open directory `dirFd`, by descriptors: nothing of a call runs
// any more, but the names it left may be links, which are removed, never followed. The common
// case, an empty directory, is one read; nothing is allocated (every page the cell writes after
// a fork is a page fault).
bool emptyDirectory(int dirFd)
{
    alignas(8) char buffer[4096];
    for (int round = 0; round < 1000; ++round) {
        if (::lseek(dirFd, 0, SEEK_SET) != 0)
            return false;
        const ssize_t n = ::getdents64(dirFd, buffer, sizeof buffer);
        if (n < 0)
            return false;
        bool any = false;
        bool progress = false;
        for (ssize_t at = 0; at < n;) {
            const auto *entry = reinterpret_cast<const dirent64 *>(buffer + at);
            at += entry->d_reclen;
            const char *name = entry->d_name;
            if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0)
                continue;
            any = true;
            if (::unlinkat(dirFd, name, 0) == 0 || errno == ENOENT) {
                progress = true;
                continue;
            }
            const int sub = ::openat(dirFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0)
                continue;
            // Writable again whatever mode the call left, so that its entries can go.
            ::fchmod(sub, 0700);
            const bool below = emptyDirectory(sub);
            ::close(sub);
            if (below && ::unlinkat(dirFd, name, AT_REMOVEDIR) == 0)
                progress = true;
        }
        if (!any)
            return true;
        if (!progress)
            return false;
    }
    return false;
}

bool emptyScratch()
{
    bool emptied = true;
    for (const char *path : kScratchDirectories) {
        const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || !emptyDirectory(fd))
            emptied = false;
        if (fd >= 0)
            ::close(fd);
    }
    return emptied;
}

struct Cell
{
    CellSetup setup;
    int socket = -1;
    int childSignals = -1;
    sigset_t programMask; // the program's own, restored in each call
};

// A call's request as received, on the cell's stack: the cell copies nothing of it; the call's
// process takes the payload for itself.
struct Request
{
    cells::CallRequest header;
    int fds[4] = {-1, -1, -1, -1}; // output, error, channel (kHasChannel), memfd (kPayloadInMemfd)
    int fdCount = 0;
    std::size_t inlineBytes = 0;
    char message[sizeof(cells::CallRequest) + cells::kInlinePayloadMax];

    void closeFds()
    {
        for (int i = 0; i < fdCount; ++i)
            ::close(fds[i]);
        fdCount = 0;
    }
};

enum class Received { Call, Nothing, Closed };

// A call's request on `socket`, checked against the uid the call's process was armed with.
Received receiveCall(int socket, uid_t armedUid, Request &request)
{
    iovec iov{request.message, sizeof request.message};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof request.fds)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    if (n == 0 || (n < 0 && errno != EINTR))
        return Received::Closed;
    request.fdCount = 0;
    for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        const int count = int((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < count && request.fdCount < 4; ++i)
            std::memcpy(&request.fds[request.fdCount++], CMSG_DATA(c) + i * sizeof(int),
                        sizeof(int));
    }
    if (n < ssize_t(sizeof request.header) || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))
        || request.message[0] != cells::CallRequest::kCall) {
        request.closeFds(); // a stray kill between calls, or garbage
        return Received::Nothing;
    }
    std::memcpy(&request.header, request.message, sizeof request.header);
    const cells::CallRequest &h = request.header;
    const bool channel = h.flags & cells::kHasChannel;
    const bool inMemfd = h.flags & cells::kPayloadInMemfd;
    request.inlineBytes = std::size_t(n) - sizeof h;
    if (h.uid != armedUid || request.fdCount != 2 + channel + inMemfd
        || h.payloadBytes > cells::kPayloadMax
        || (inMemfd ? request.inlineBytes != 0 : request.inlineBytes != h.payloadBytes)) {
        request.closeFds();
        return Received::Nothing;
    }
    return Received::Call;
}

// In the call's process: the payload, NUL-terminated, on its own heap (never freed: it is the
// program's to read until the call ends).
char *takePayload(const Request &request)
{
    const cells::CallRequest &h = request.header;
    char *payload = static_cast<char *>(std::malloc(std::size_t(h.payloadBytes) + 1));
    if (!payload)
        return nullptr;
    if (h.flags & cells::kPayloadInMemfd) {
        const int memfd = request.fds[request.fdCount - 1];
        const bool read = ::pread(memfd, payload, h.payloadBytes, 0) == ssize_t(h.payloadBytes);
        ::close(memfd);
        if (!read)
            return nullptr;
    } else {
        std::memcpy(payload, request.message + sizeof h, h.payloadBytes);
    }
    payload[h.payloadBytes] = '\0';
    return payload;
}

// The call's process ends with _exit once its program exits: the program's stdio is flushed,
// and nothing else of an exit (the destructors and fini functions of every loaded object) runs
// in the fork, where each page they would touch costs a fault and nothing needs them.
void exitWithoutCleanup(int status, void *)
{
    std::fflush(nullptr);
    ::_exit(status);
}

// Kills every process of the cell's pid namespace but the cell (its init) and reaps them all.
// SIGKILL cannot be caught, and a process about to be killed cannot complete a fork, so the
// rounds end; the pids limit bounds how many there are.
void killAndReap()
{
    for (;;) {
        ::kill(-1, SIGKILL);
        int status;
        const pid_t done = ::waitpid(-1, &status, 0);
        if (done < 0 && errno == ECHILD)
            return;
    }
}

void send(const Cell &cell, const void *data, std::size_t size)
{
    (void)!::send(cell.socket, data, size, MSG_NOSIGNAL);
}

// What the daemon arms the next call with (cell_protocol::ArmRequest): its uid, and the
// workspace's view made for it (-1: none; the cell closes it once the call's process has it).
struct Arm
{
    uid_t uid = 0;
    int workspaceView = -1;
};

// The next call's arm, from the daemon; nothing once the daemon closed the cell. A stray kill
// between calls is passed over.
std::optional<Arm> awaitArm(const Cell &cell)
{
    for (;;) {
        cells::ArmRequest arm;
        std::vector<int> received;
        const ssize_t n = receiveWithFds(cell.socket, &arm, sizeof arm, received, 1);
        if (n < 0 && (errno == EINTR || errno == EMSGSIZE))
            continue;
        if (n <= 0)
            return std::nullopt;
        const uid_t uid = arm.uid;
        const bool inPool = uid >= cell.setup.poolFirst
                && uid - cell.setup.poolFirst < cell.setup.poolCount
                && uid != cell.setup.templateUid;
        const bool hasView = arm.flags & cells::ArmRequest::kHasWorkspaceView;
        if (n == ssize_t(sizeof arm) && arm.kind == cells::ArmRequest::kArm && inPool
            && received.size() == (hasView ? 1u : 0u))
            return Arm{uid, hasView ? received.front() : -1};
        closeAll(received);
    }
}

// Reports a refusal to the cell (on the report socket, where it is by then) and ends the
// process.
[[noreturn]] void refuseCall(const CallRefusal &refusal, int report)
{
    std::fprintf(stderr, "cmcp-jail: %s: %s\n", refusal.layer.c_str(), refusal.message.c_str());
    const std::string text = refusal.layer + "\n" + refusal.message;
    if (::send(kCallReportFd, text.data(), text.size(), MSG_NOSIGNAL) < 0)
        (void)!::send(report, text.data(), text.size(), MSG_NOSIGNAL);
    ::_exit(refusal.code);
}

// In a call's process, forked ahead of its call with its uid: makes itself the call as far as
// it can (armCall), takes the request from the daemon (the cell reads nothing from its socket
// meanwhile), tells the cell ('t'), and finishes. Returns in the call's process only, with
// `payloadSize` set; ends the process otherwise.
void takeCall(Cell &cell, const Arm &arm, int report, char **payload, long &payloadSize)
{
    const uid_t uid = arm.uid;
    CallRefusal refusal;
    if (!armCall(cell.setup, uid, arm.workspaceView, cell.socket, report, refusal))
        refuseCall(refusal, report);
    Request request;
    for (;;) {
        const Received received = receiveCall(kArmedSocketFd, uid, request);
        if (received == Received::Closed)
            ::_exit(0); // the daemon closed the cell: no call comes
        if (received == Received::Call)
            break;
    }
    (void)!::send(kCallReportFd, "t", 1, MSG_NOSIGNAL);
    const bool channel = request.header.flags & cell_protocol::kHasChannel;
    *payload = takePayload(request);
    if (!*payload)
        refuseCall({"identity", kExitIdentity, errnoText("the call's payload", errno)}, report);
    if (!finishCall({request.fds[0], request.fds[1], channel ? request.fds[2] : -1}, refusal))
        refuseCall(refusal, report);
    payloadSize = long(request.header.payloadBytes);
    ::on_exit(exitWithoutCleanup, nullptr);
    ::sigprocmask(SIG_SETMASK, &cell.programMask, nullptr);
}

// The cell's side of one call: forks the call's process ahead of its call (the fork and what
// it copies are then off the call's path), waits for it to take a call and end (or kills it
// when the daemon asks), leaves nothing of it behind and answers. Returns in the call's process
// with `payloadSize` set; in the cell false when it cannot take another call.
bool runCall(Cell &cell, const Arm &arm, char **payload, long &payloadSize)
{
    const std::vector<CounterFile> &counters = cell.setup.counters;
    const bool peakReset = resetPeakMemory(counters);
    const CounterReading before = readCounters(counters);
    int report[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report) != 0)
        return false;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(report[0]);
        takeCall(cell, arm, report[1], payload, payloadSize);
        return true;
    }
    if (arm.workspaceView >= 0)
        ::close(arm.workspaceView); // the call's alone
    ::close(report[1]);
    if (pid < 0) {
        ::close(report[0]);
        return false;
    }
    cells::CallEnd end;
    bool ended = false;
    bool taken = false; // the call's process has its request: the socket is the cell's again
    bool daemonGone = false;
    int reportFd = report[0];
    int listener = -1; // of the call's seccomp filter, when it notifies
    bool countsComplete = true;
    SeccompDenials denials;
    std::string failed;
    // The messages of the call's process there are: 't' (it took its request), its seccomp
    // listener (a descriptor), or why it failed. Closes the socket at its end.
    const auto readFromCall = [&] {
        for (;;) {
            char text[4096];
            std::vector<int> received;
            const ssize_t n =
                    receiveWithFds(reportFd, text, sizeof text, received, 1, MSG_DONTWAIT);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno == EAGAIN)
                return;
            if (n <= 0) {
                ::close(reportFd);
                reportFd = -1;
                return;
            }
            if (!received.empty() && listener < 0)
                listener = received.front();
            else if (!received.empty())
                closeAll(received);
            else if (n == 1 && text[0] == 't')
                taken = true;
            else
                failed.assign(text, std::size_t(n));
        }
    };
    while (!ended) {
        pollfd ready[4] = {{cell.childSignals, POLLIN, 0},
                           {daemonGone || !taken ? -1 : cell.socket, POLLIN, 0},
                           {reportFd, POLLIN, 0},
                           {listener, POLLIN, 0}};
        if (::poll(ready, 4, -1) < 0)
            continue;
        // Denied calls first: each holds a task of the call until it is answered. A listener
        // that fails is closed (the kernel then fails such calls with ENOSYS rather than hold
        // them), and its counts, which would be short, are left out.
        if (ready[3].revents & POLLIN) {
            if (denials.answerOne(listener) == SeccompDenials::Answer::Broken) {
                ::close(listener);
                listener = -1;
                countsComplete = false;
            }
        } else if (ready[3].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            ::close(listener); // no task uses the filter any more
            listener = -1;
        }
        if (ready[2].revents)
            readFromCall();
        if (ready[1].revents) {
            char kill = 0;
            const ssize_t n = ::recv(cell.socket, &kill, 1, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                daemonGone = true;
            if (daemonGone || (n == 1 && kill == cells::kKillCall)) {
                end.killed = 1;
                ::kill(-1, SIGKILL);
            }
        }
        if (ready[0].revents) {
            signalfd_siginfo info;
            while (::read(cell.childSignals, &info, sizeof info) > 0) { }
            // Orphans of the call are the cell's to reap as they end; its first process ends it.
            int status = 0;
            pid_t done;
            while ((done = ::waitpid(-1, &status, WNOHANG)) > 0) {
                if (done == pid) {
                    end.status = status;
                    ended = true;
                }
            }
        }
    }
    // A call that ends takes every process it left running with it, as a cold job does when
    // its pid namespace's init ends.
    killAndReap();
    // What the call's process said just before it ended.
    if (reportFd >= 0)
        readFromCall();
    if (reportFd >= 0)
        ::close(reportFd);
    if (listener >= 0)
        ::close(listener);
    // The process armed for a call ended without one: it failed (the daemon is told, and the
    // cell ends), or the daemon closed the cell.
    if (!taken) {
        if (!failed.empty()) {
            const std::string message = std::string(1, cells::kArmFailed) + failed;
            send(cell, message.data(), message.size());
        }
        return false;
    }
    const CounterReading after = readCounters(counters);
    if (after.cpuNanoseconds && before.cpuNanoseconds)
        end.cpuNanoseconds = *after.cpuNanoseconds - *before.cpuNanoseconds;
    if (peakReset && after.peakMemoryBytes) {
        end.hasPeakMemory = 1;
        end.peakMemoryBytes = *after.peakMemoryBytes;
    }
    end.oomKilled = after.oomKills > before.oomKills;
    end.pidsRefused = after.pidsRefused - before.pidsRefused;
    if (!failed.empty()) {
        cells::CallFailure refused;
        refused.code = WIFEXITED(end.status) ? WEXITSTATUS(end.status) : kExitIdentity;
        std::string message(reinterpret_cast<const char *>(&refused), sizeof refused);
        message += failed;
        send(cell, message.data(), message.size());
    }
    if (countsComplete && (!denials.counts().empty() || denials.unnamed() > 0)) {
        std::string message(1, cells::kDenials);
        for (const SeccompDenial &count : denials.counts())
            message += count.syscall + " " + count.errnoName + " " + std::to_string(count.count)
                    + "\n";
        if (denials.unnamed() > 0)
            message += "- - " + std::to_string(denials.unnamed()) + "\n";
        send(cell, message.data(), message.size());
    }
    send(cell, &end, sizeof end);
    // A /tmp that cannot be emptied must not reach the next call: the cell ends instead (the
    // daemon is told, and makes another).
    return !daemonGone && emptyScratch();
}

// Serves calls until the daemon closes the socket (then exits), and returns only in a call's
// process, with its payload.
long serveCells(char **payload)
{
    static bool entered = false;
    if (entered) {
        std::fprintf(stderr, "cmcp_cell_serve: not a template's cell\n");
        return -1;
    }
    entered = true;
    struct stat st;
    if (::fstat(kCellSocketFd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        std::fprintf(stderr, "cmcp_cell_serve: not a template's cell (no socket at %d)\n",
                     kCellSocketFd);
        return -1;
    }
    // Never destroyed: nothing of the cell runs at a call's exit.
    static Cell &cell = *new Cell;
    ::close(kZygoteLibraryFd); // mapped by now
    cell.socket = ::fcntl(kCellSocketFd, F_DUPFD_CLOEXEC, 64);
    ::close(kCellSocketFd);
    std::string error;
    const bool setUp = readSetup(kCellSetupFd, cell.setup, error);
    ::close(kCellSetupFd);
    // Before the cell is ready, the monitor hears "f<layer>\n<message>" and tells the daemon.
    const auto fails = [&](const char *layer, int code, const std::string &why) {
        const std::string text = std::string("f") + layer + "\n" + why;
        (void)!::send(cell.socket, text.data(), text.size(), MSG_NOSIGNAL);
        std::fprintf(stderr, "cmcp-jail: %s: %s\n", layer, why.c_str());
        ::_exit(code);
    };
    if (cell.socket < 0 || !setUp)
        fails("identity", kExitIdentity,
              cell.socket < 0 ? errnoText("the cell's socket", errno) : error);
    // Not dumpable: nothing of a call's uid (or any other) may trace the cell or read its
    // memory; and it dies with the template.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0
        || ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        fails("identity", kExitIdentity, errnoText("prctl", errno));
    sigset_t childSignal;
    ::sigemptyset(&childSignal);
    ::sigaddset(&childSignal, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &childSignal, &cell.programMask);
    // Above the numbers a call's descriptors take, like every descriptor of the cell's.
    const int signals = ::signalfd(-1, &childSignal, SFD_CLOEXEC | SFD_NONBLOCK);
    cell.childSignals = signals >= 0 ? ::fcntl(signals, F_DUPFD_CLOEXEC, 64) : -1;
    if (signals >= 0)
        ::close(signals);
    if (cell.childSignals < 0)
        fails("identity", kExitIdentity, errnoText("signalfd", errno));
    // Before any call: a kernel that refuses each call its user namespace refuses every one,
    // and the daemon is better told so now (it starts its calls cold).
    if (const std::string refused = probeCallNamespaces(); !refused.empty())
        fails("namespaces", kExitNamespaces,
              "the kernel refuses a call's own user namespace: " + refused);
    if (::send(cell.socket, "r", 1, MSG_NOSIGNAL) != 1)
        ::_exit(0); // the monitor gave up on this cell
    for (;;) {
        const std::optional<Arm> arm = awaitArm(cell);
        if (!arm)
            ::_exit(0); // the daemon closed the cell
        long payloadSize = -1;
        const bool goOn = runCall(cell, *arm, payload, payloadSize);
        if (payloadSize >= 0)
            return payloadSize; // in the call's process
        if (!goOn)
            ::_exit(0);
    }
}

} // namespace

} // namespace cmcp::jail

// The entry point for programs that load the library by hand (python3's ctypes). Returns the
// payload's size with *payload pointing at it (NUL-terminated), in a call's process only;
// -1 when this process is not a cell.
extern "C" __attribute__((visibility("default"))) long cmcp_cell_serve(char **payload)
{
    return cmcp::jail::serveCells(payload);
}
