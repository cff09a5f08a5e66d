// What the daemon and a template's processes say to each other (the design is in
// jail/template.h). Every socket is SOCK_SEQPACKET: each message arrives whole, with the
// descriptors that ride on it (SCM_RIGHTS). The daemon (server/sandbox) and cmcp-jail with its
// zygote library are built from this one header, so the two sides cannot disagree on a layout.
#pragma once

#include <cstdint>

namespace cmcp::cell_protocol {

// --- what a cell's program and a call find at fixed descriptors -------------------------------
// The zygote library, when the cell execs its program (bash enables it as a builtin, python3
// loads it with ctypes, both through /proc/self/fd/<n>).
inline constexpr int kZygoteLibraryFd = 3;
// A call's result channel, when it has one (the policy's CMCP_RESULT_FD names it).
inline constexpr int kCallChannelFd = 3;
// The library's function a cell's program calls: long cmcp_cell_serve(char **payload). It
// returns only in a call's process, with the call's payload (NUL-terminated) and its size.
inline constexpr const char *kServeFunction = "cmcp_cell_serve";

// --- the daemon and a template's monitor: the control connection ------------------------------
// The daemon connects to the monitor's socket (cmcp-jail --serve-template SOCKET) once and keeps
// the connection; closing it ends the template, its cells and their calls.

// Daemon -> monitor.
struct ControlRequest
{
    char kind = 0; // kMakeCell, kKillCell
    std::uint8_t reserved[3] = {};
    std::uint32_t cell = 0; // kKillCell: which
};
inline constexpr char kMakeCell = 'n';
// A cell that no longer answers: the monitor kills every task of its cgroup, which ends the
// cell and its call (the cell is the init of its pid namespace).
inline constexpr char kKillCell = 'k';

// Monitor -> daemon: this header, then text.
struct ControlReply
{
    char kind = 0; // kCellReady, kCellFailed, kCellGone
    std::uint8_t reserved[3] = {};
    std::uint32_t cell = 0;
};
// A cell is being made; the text lists its cgroup directories on the host, one per line, which
// the daemon removes should the monitor be killed before it could.
inline constexpr char kCellCgroups = 'm';
// A cell waits for calls; its socket rides on the message.
inline constexpr char kCellReady = 'c';
// A cell could not be made; the text says why.
inline constexpr char kCellFailed = 'e';
// A cell ended and its cgroups are gone.
inline constexpr char kCellGone = 'g';

// --- the daemon and one cell: one call at a time ----------------------------------------------

// Daemon -> cell: the uid of the next call, leased for it. The cell forks that call's process
// at once, which makes itself the call as far as it can before the call comes (its uid, its
// namespaces, Landlock, seccomp): that work is then off the call's path. Each call is preceded
// by one, and its CallRequest names the same uid.
// With kHasWorkspaceView, riding on it: a detached idmapped view of the template's workspace
// made for that uid (the daemon's sandbox/WorkspaceIdmap), which the call's process attaches
// over the workspace in a mount namespace of its own, so the workspace's files are its user's.
struct ArmRequest
{
    char kind = kArm;
    std::uint8_t flags = 0;
    std::uint8_t reserved[2] = {};
    std::uint32_t uid = 0;
    static constexpr char kArm = 'a';
    static constexpr std::uint8_t kHasWorkspaceView = 1;
};

// Cell -> daemon: the process armed for the next call failed before its call came; the text
// says why ("<layer>\n<message>"). The cell ends.
inline constexpr char kArmFailed = 'A';

// Daemon -> cell: a call. Riding on it: the call's standard output and standard error, then its
// result channel (kHasChannel), then a memfd holding the payload (kPayloadInMemfd); otherwise
// the payload follows this header in the same message.
struct CallRequest
{
    char kind = kCall;
    std::uint8_t flags = 0;
    std::uint16_t reserved = 0;
    std::uint32_t uid = 0; // the call's own uid of the pool, the one the cell was armed with
    std::uint32_t payloadBytes = 0; // the command or the code, as the zygote program reads it
    static constexpr char kCall = 'r';
};
inline constexpr std::uint8_t kHasChannel = 1;
inline constexpr std::uint8_t kPayloadInMemfd = 2;
// Larger payloads come in a memfd: the cell receives into a buffer on its stack.
inline constexpr std::uint32_t kInlinePayloadMax = 2048;
inline constexpr std::uint32_t kPayloadMax = 64u << 20;

// Daemon -> cell: kill the call that runs (its time limit, a cancel). One byte.
inline constexpr char kKillCall = 'k';

// Cell -> daemon: the call failed closed before any of its code ran; the text that follows is
// "<layer>\n<message>". Its CallEnd follows.
struct CallFailure
{
    char kind = kFailed;
    std::uint8_t reserved[3] = {};
    std::int32_t code = 0; // cmcp-jail's exit status for that layer (jail/exit_codes.h)
    static constexpr char kFailed = 'f';
};

// Cell -> daemon, before the CallEnd of a call whose seccomp filter denied something: 'd',
// then one line per denied syscall, "<syscall> <errno name> <count>\n" (at most 64 names), and
// "- - <count>\n" for the calls of syscalls beyond those.
inline constexpr char kDenials = 'd';

// Cell -> daemon: the call ended and every process it started is gone; the cell takes the next.
struct CallEnd
{
    char kind = kEnded;
    std::uint8_t killed = 0; // the daemon asked for the kill
    std::uint8_t oomKilled = 0;
    std::uint8_t hasPeakMemory = 0; // 0: the kernel cannot reset the peak between calls
    std::int32_t status = 0; // as waitpid gives it for the call's first process
    std::uint32_t reserved = 0;
    std::uint64_t cpuNanoseconds = 0; // of every process of the call
    std::uint64_t peakMemoryBytes = 0;
    std::uint64_t pidsRefused = 0; // forks the pids limit refused
    static constexpr char kEnded = 'x';
};

} // namespace cmcp::cell_protocol
