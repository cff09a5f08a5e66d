// Templates: one jail built ahead for many calls, each call a fork of an interpreter that is
// already running inside it (the zygote model), with isolation of its own. The processes:
//
//   cmcp-jail --serve-template SOCKET --template-uids FIRST:COUNT --policy-fd N -- PROGRAM ...
//     The monitor (template_monitor.cpp; host root, outside every namespace). It clones the
//     template into the policy's namespaces with a user namespace that maps uid 1000 to the
//     template's own pool uid, every other uid of the pool to itself and gid 1000 to the pool's
//     gid, nothing else of the host, and places it in a cgroup of its own. It then listens on
//     SOCKET (mode 0600) for the one connection of the daemon (host root; anyone else is
//     refused), and on the daemon's request makes cells: for each a cgroup with the policy's
//     memory, pids and CPU limits (cmcp/cell-<monitor pid>-<n>), a socket pair whose one end
//     the cell gets and the other, once the cell is placed in its cgroup and ready, the daemon
//     (cell_protocol::kCellReady). It removes a cell's cgroups when the cell ends.
//
//   The template (template_process.cpp). Inside the jail's minimal root, as uid 1000 with the
//     capabilities of its user namespace (none on the host), not dumpable, never execs and runs
//     nothing of any call: it only clones cells when the monitor asks.
//
//   A cell (the same file, then the zygote library). A clone of the template into a pid
//     namespace of its own (the cell is its init), a mount namespace of its own with a fresh
//     /proc that shows a process only to its own uid (hidepid=invisible), a fresh /tmp and
//     /dev/shm, and (without the policy's network) a network namespace of its own. Placed in
//     its cgroup by the monitor once, it enters a cgroup namespace rooted there and execs
//     PROGRAM (bash or python3, with the policy's environment exactly) keeping five
//     capabilities of its user namespace as ambient ones (setuid, setgid, kill, dac_override,
//     fowner) and no other in its bounding set. PROGRAM loads the zygote library
//     (libcmcp-zygote.so, held by the monitor as a descriptor) and calls its serve function,
//     which never returns in the cell: it answers the daemon's calls one at a time.
//
//   A call (zygote_call.cpp): a fork of the cell, so of an interpreter already initialised,
//     made ahead of its call. The daemon leases the next call's uid and gives it to the cell
//     (cell_protocol::ArmRequest); the cell forks that call's process, which makes itself the
//     call as far as it can before the call comes: it switches to that pool uid, enters a user
//     namespace of its own that maps uid and gid 1000 to that uid and the pool's gid alone (so
//     it holds no other uid of the pool) and an IPC namespace of its own, allows no further user
//     namespace, applies the rlimits, AppArmor, Landlock (a domain of its own: neither signals
//     nor abstract sockets reach the cell, the template or another call), drops every
//     capability (bounding set included), sets no_new_privs, verifies that root cannot be
//     regained, and loads seccomp, whose listener it hands the cell. Then it takes its request
//     from the daemon's socket itself (the cell reads nothing from it meanwhile), tells the cell,
//     takes the call's descriptors at 0..3, closes every other one (the cell's socket with them)
//     and returns to the interpreter with the call's payload. The cell never runs a call's code.
//
// A call's end. When the call's first process ends, the cell (init of the pid namespace)
// kills every process left in it (kill(-1)) and reaps them until none is left, reads the
// cgroup's counters (CPU time, peak memory, OOM kills, forks refused; the monitor opened them
// for it, and the peak is reset before each call), answers (cell_protocol::CallEnd, after the
// seccomp denials it answered and counted on the filter's listener, which the call sent it),
// empties /tmp and /dev/shm by descriptors, and forks the process of the next call. At the time
// limit or a cancel the daemon asks the cell to kill the call; should a cell not answer, the
// monitor kills its cgroup, which ends the cell and its call. A template that dies takes every cell
// and call with it (its pid namespace).
//
// What the calls of one cell share, one after the other: the cgroup (limits and counters are
// per call), the network namespace (a call's sockets die with its processes), the pid
// namespace's counter (a call sees how many processes earlier ones made) and the interpreter's
// state as it was in the cell (the same address layout; Python's hash seed).
#pragma once

#include "jail/layers.h"
#include "jail/protocol/CellProtocol.h"

#include <sys/types.h>

#include <string>

namespace cmcp::jail {

struct TemplateOptions
{
    std::string socketPath;
    uid_t uidFirst = 0; // the pool a call's uid must come from
    uid_t uidCount = 0;
};

// Where PROGRAM finds, when a cell execs it, what the zygote library needs (zygote_cell.cpp):
// the library itself, the socket of its calls, and the cell's setup (a memfd of JSON: the
// template's policy, its seccomp program, the pool, and which cgroup counter sits at which
// descriptor from kFirstCounterFd on).
inline constexpr int kZygoteLibraryFd = cell_protocol::kZygoteLibraryFd;
inline constexpr int kCellSocketFd = 4;
inline constexpr int kCellSetupFd = 5;
inline constexpr int kFirstCounterFd = 6;
inline constexpr int kCallChannelFd = cell_protocol::kCallChannelFd;
// The library's file name, beside cmcp-jail.
inline constexpr const char *kZygoteLibraryName = "libcmcp-zygote.so";

// template_monitor.cpp. Never returns: exits when the template ends, on SIGTERM, or when the
// daemon closes its connection or standard input.
[[noreturn]] void runTemplateMonitor(const Policy &policy, const std::string &policyText,
                                     const SeccompProgram &seccomp, const TemplateOptions &options,
                                     char **argv);

// template_process.cpp, in the template process after the monitor cloned it and wrote its id
// maps: becomes the template and clones cells for the monitor on `controlFd` until the monitor
// goes. `program` is PROGRAM and its arguments, which each cell execs.
[[noreturn]] void runTemplateProcess(const Policy &policy, Launch launch, char **program,
                                     int controlFd, int failureFd);

// What the monitor and the template say on the template's control socket (SOCK_SEQPACKET).
namespace template_protocol {
// Monitor -> template: make a cell. Riding on it: the cell's socket, its setup memfd and its
// counters, in that order.
struct MakeCell
{
    char kind = 'n';
    std::uint8_t reserved[3] = {};
    std::uint32_t cell = 0;
    std::uint32_t counters = 0; // descriptors after the setup
};
// Template -> monitor: a cell ended (the template reaped it).
struct CellEnded
{
    char kind = 'd';
    std::uint8_t reserved[3] = {};
    std::uint32_t cell = 0;
};
// On the cell's own socket, before the daemon has it. Cell -> monitor: 'p' with SCM_CREDENTIALS
// naming the cell (place me); monitor -> cell: 'g' (placed); cell -> monitor: 'r' (ready for
// calls) or 'f' + "<layer>\n<message>" (it could not start).
} // namespace template_protocol

} // namespace cmcp::jail
