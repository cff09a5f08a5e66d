// The job's seccomp filter, built with libseccomp and exported as classic BPF, so it can be
// compiled once (in the daemon, or in the jail while it may still allocate) and loaded later
// with nothing but prctl(PR_SET_SECCOMP). No Qt, no process state touched here.
#pragma once

#include <linux/filter.h>

#include <optional>
#include <string>
#include <vector>

namespace cmcp::jail {

struct FilterOptions
{
    // false: socket() for any family but AF_UNIX fails with EAFNOSUPPORT.
    bool network = false;
    // true: every denial is SECCOMP_RET_USER_NOTIF, for a listener that answers it with
    // deniedErrno and counts it; a filter loaded without a listener would fail those calls
    // with ENOSYS instead. false: each denial is SECCOMP_RET_ERRNO(deniedErrno).
    bool notify = false;
};

// The errno a denied syscall of the filter gets (native syscall numbers): ENOSYS for clone3,
// EAFNOSUPPORT for socket, EPERM for every other rule.
int deniedErrno(long syscallNumber);

// An allow-by-default filter with explicit denials (see seccomp_filter.cpp for the rules),
// for the native architecture (x86_64) only: any other syscall ABI (i386 through int 0x80,
// x32) kills the process. Returns the BPF program, or nothing with `error` set.
std::optional<std::vector<sock_filter>> buildJobFilter(const FilterOptions &options,
                                                       std::string &error);

} // namespace cmcp::jail
