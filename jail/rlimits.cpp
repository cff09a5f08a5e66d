// Layer: resource limits (setrlimit). Applied while the jail is still privileged, before the
// identity switch, so that the limits are in place before the job's uid exists in this
// process: RLIMIT_NPROC is checked per real uid at fork time and at the setuid, and hard limits
// can only be lowered (root here lacks CAP_SYS_RESOURCE: nothing may be raised above the
// inherited hard limit, and a policy asking for that fails closed).
#include "jail/layers.h"

#include <sys/resource.h>

#include <cerrno>

namespace cmcp::jail {

namespace {

bool setLimit(int resource, const char *name, rlim_t soft, rlim_t hard, std::string &error)
{
    struct rlimit rl
    {
        soft, hard
    };
    if (::setrlimit(resource, &rl) != 0) {
        int err = errno;
        struct rlimit cur
        {
        };
        std::string extra;
        if (::getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY
            && hard > cur.rlim_max)
            extra = " (hard limit is " + std::to_string(cur.rlim_max) + ")";
        error = errnoText(std::string("setrlimit ") + name + " " + std::to_string(soft) + "/"
                                  + std::to_string(hard) + extra,
                          err);
        return false;
    }
    struct rlimit back
    {
    };
    if (::getrlimit(resource, &back) != 0 || back.rlim_cur != soft || back.rlim_max != hard) {
        error = std::string("setrlimit ") + name + ": the limit did not stick";
        return false;
    }
    return true;
}

} // namespace

bool applyRlimits(const Policy &policy, std::string &error)
{
    // No core dumps, whatever the policy says: a core file of a job is a leak waiting to happen.
    if (!setLimit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, error))
        return false;

    const Limits &l = policy.limits;
    if (l.cpuSeconds) {
        // Soft below hard: SIGXCPU at the soft limit, SIGKILL one second later if it is caught.
        if (!setLimit(RLIMIT_CPU, "RLIMIT_CPU", *l.cpuSeconds, *l.cpuSeconds + 1, error))
            return false;
    }
    if (l.fileSizeBytes
        && !setLimit(RLIMIT_FSIZE, "RLIMIT_FSIZE", *l.fileSizeBytes, *l.fileSizeBytes, error))
        return false;
    if (l.openFiles && !setLimit(RLIMIT_NOFILE, "RLIMIT_NOFILE", *l.openFiles, *l.openFiles, error))
        return false;
    if (l.processes && !setLimit(RLIMIT_NPROC, "RLIMIT_NPROC", *l.processes, *l.processes, error))
        return false;
    if (l.addressSpaceBytes
        && !setLimit(RLIMIT_AS, "RLIMIT_AS", *l.addressSpaceBytes, *l.addressSpaceBytes, error))
        return false;
    return true;
}

} // namespace cmcp::jail
