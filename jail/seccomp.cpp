// Layer: seccomp. The filter is built (seccomp_filter.cpp) while the jail may still allocate,
// before identity; it is loaded as the very last step before execve, with the seccomp syscall
// only, so that everything the jail itself does after it is just the exec path. A template's
// call loads it as its last step too (zygote_call.cpp), with no exec after.
#include "jail/layers.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cmcp::jail {

bool seccompUserNotifAvailable()
{
    std::uint32_t action = SECCOMP_RET_USER_NOTIF;
    return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

int applySeccomp(const SeccompProgram &program, std::string &error)
{
    if (program.code.empty() || program.code.size() > BPF_MAXINSNS) {
        error = "no filter was built";
        return -1;
    }
    // Unprivileged loading needs no_new_privs (set by identity): check rather than assume.
    int nnp = ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
    if (nnp != 1) {
        error = nnp < 0 ? errnoText("PR_GET_NO_NEW_PRIVS", errno) : "no_new_privs is not set";
        return -1;
    }
    sock_fprog prog{};
    prog.len = static_cast<unsigned short>(program.code.size());
    prog.filter = const_cast<sock_filter *>(program.code.data());
    // A filter that notifies must come with its listener (close-on-exec): without one the
    // kernel would fail the denied calls with ENOSYS rather than the filter's errno.
    const unsigned flags = program.notifies ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
    long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    if (rc < 0) {
        error = errnoText("seccomp(SECCOMP_SET_MODE_FILTER)", errno);
        return -1;
    }
    return program.notifies ? static_cast<int>(rc) : 0;
}

} // namespace cmcp::jail
