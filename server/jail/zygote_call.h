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

// A call's descriptors as the cell received them, and the socket (SOCK_SEQPACKET) back to the
// cell: a refusal goes there as "<layer>\n<message>", and the listener of a seccomp filter that
// notifies as a descriptor (posix/DescriptorPassing.h, sendDescriptor).
struct CallDescriptors
{
    int output = -1;
    int error = -1;
    int channel = -1; // -1: none
    int report = -1;
};
// Where becomeCall leaves the report socket when it fails (it closes it when it succeeds).
inline constexpr int kCallReportFd = kCallChannelFd + 1;

// Why a call could not be made, before any of its code ran.
struct CallRefusal
{
    std::string layer;
    int code = 0;
    std::string message;
};

// In the call's process, just forked from the cell: makes it the call (template.h: its
// descriptors at 0..3 and nothing else open (but the failure pipe, until it succeeded), its uid,
// its user and IPC namespaces, rlimits, AppArmor, Landlock, no capability, no_new_privs, seccomp).
// On success the process may run the call's code; on failure the process must end without running
// any.
bool becomeCall(const CellSetup &setup, uid_t uid, const CallDescriptors &fds,
                CallRefusal &refusal);

// Whether this kernel lets a cell's fork make the user namespace each call enters (Ubuntu's
// AppArmor restriction of unprivileged user namespaces, or Debian's
// kernel.unprivileged_userns_clone=0, would not): forks a child that makes one, as uid 1000,
// and maps it. Empty when it can, else why not.
std::string probeCallNamespaces();

} // namespace cmcp::jail
