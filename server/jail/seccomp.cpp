// Layer: seccomp. The filter is built (seccomp_filter.cpp) while the jail may still allocate,
// before identity; it is loaded as the very last step before execve, with prctl only, so
// that everything the jail itself does after it is just the exec path.
#include "jail/layers.h"
#include "jail/seccomp_filter.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>

#include <cerrno>

namespace cmcp::jail {

bool buildSeccomp(const Policy &policy, SeccompProgram &out, std::string &error)
{
    FilterOptions options;
    options.network = policy.seccomp.network;
    std::string why;
    auto program = buildJobFilter(options, why);
    if (!program) {
        error = "building the filter: " + why;
        return false;
    }
    out.code = std::move(*program);
    return true;
}

bool applySeccomp(const SeccompProgram &program, std::string &error)
{
    if (program.code.empty() || program.code.size() > BPF_MAXINSNS) {
        error = "no filter was built";
        return false;
    }
    // Unprivileged loading needs no_new_privs (set by identity): check rather than assume.
    int nnp = ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
    if (nnp != 1) {
        error = nnp < 0 ? errnoText("PR_GET_NO_NEW_PRIVS", errno) : "no_new_privs is not set";
        return false;
    }
    sock_fprog prog{};
    prog.len = static_cast<unsigned short>(program.code.size());
    prog.filter = const_cast<sock_filter *>(program.code.data());
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
        error = errnoText("prctl(PR_SET_SECCOMP)", errno);
        return false;
    }
    return true;
}

} // namespace cmcp::jail
