// The zygote library's two halves (template.h): the cell, which serves calls one at a time
// (zygote_cell.cpp), and each call's process, a fork of the cell made into the call
// (zygote_call.cpp). Linked into libcmcp-zygote.so only.
#pragma once

#include "jail/cgroup_counters.h"
#include "jail/layers.h"
#include "jail/template.h"

#include <sys/types.h>

#include <string>
#include <vector>

namespace cmcp::jail {

// What the monitor told the cell (kCellSetupFd).
struct CellSetup
{
    Policy policy;
    SeccompProgram seccomp;
    uid_t poolFirst = 0;
    uid_t poolCount = 0;
    uid_t templateUid = 0;
    std::vector<CounterFile> counters;
};

// Where a call's process keeps, while it is armed (before its request came), the socket back
// to the cell (a refusal goes there as "<layer>\n<message>", and the listener of a seccomp filter
// that notifies as a descriptor, posix/DescriptorPassing.h), the cell's socket (its request comes
// there), /dev/null (its standard input to be) and, when it has one, the workspace's view. The
// cell's own standard output and error stay at 1 and 2 until then; nothing else is open.
inline constexpr int kCallReportFd = kCallChannelFd + 1;
inline constexpr int kArmedSocketFd = kCallReportFd + 1;
inline constexpr int kArmedNullFd = kArmedSocketFd + 1;
// The workspace's idmapped view, from the arm request, until the call's process attaches it.
inline constexpr int kArmedViewFd = kArmedNullFd + 1;

// Why a call could not be made, before any of its code ran.
struct CallRefusal
{
    std::string layer;
    int code = 0;
    std::string message;
};

// In a call's process, just forked from the cell, before its call has come: makes it the call
// as far as that goes without the call (template.h: its uid, its user and IPC namespaces,
// rlimits, AppArmor, Landlock, no capability, no_new_privs, seccomp), with the descriptors above
// (`socket` and `report` are the cell's and this process's ends). On failure the process must
// end; on success it may only take its request (armedCall's) and then finishCall.
// `workspaceView`: the idmapped view of the workspace the daemon made for `uid`, or -1 (the
// call sees the workspace as the cell does).
bool armCall(const CellSetup &setup, uid_t uid, int workspaceView, int socket, int report,
             CallRefusal &refusal);

// The call's descriptors as its request brought them.
struct CallDescriptors
{
    int output = -1;
    int error = -1;
    int channel = -1; // -1: none
};

// Once the request has come: the call's descriptors at 0..3 (/dev/null, its output, its result
// channel), the cell's socket and everything else closed, the report socket too when it
// succeeds; the process then may run the call's code. On failure it must end without.
bool finishCall(const CallDescriptors &fds, CallRefusal &refusal);

// Whether this kernel lets a cell's fork make the user namespace each call enters (Ubuntu's
// AppArmor restriction of unprivileged user namespaces, or Debian's
// kernel.unprivileged_userns_clone=0, would not): forks a child that makes one, as uid 1000,
// and maps it. Empty when it can, else why not.
std::string probeCallNamespaces();

} // namespace cmcp::jail
