// Layer: AppArmor, for a call of a template (zygote_call.cpp): its interpreter is running
// already and no exec follows, so the profile is taken at once, as aa_change_profile does, by
// writing "changeprofile <profile>" to the task's AppArmor attribute. Written here rather than
// through libapparmor: the zygote library must need nothing but libc (template.h). A kernel
// without AppArmor has no such attribute, and the layer fails closed.
#include "jail/layers.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace cmcp::jail {

bool changeApparmorProfile(const Policy &policy, std::string &error)
{
    if (!policy.apparmor) {
        error = "no \"apparmor\" object in the policy";
        return false;
    }
    const std::string command = "changeprofile " + policy.apparmor->profile;
    // The LSM-specific attribute (Linux 5.8+), else the shared one.
    for (const char *path :
         {"/proc/thread-self/attr/apparmor/current", "/proc/thread-self/attr/current"}) {
        const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        const ssize_t n = ::write(fd, command.data(), command.size());
        const int err = errno;
        ::close(fd);
        if (n == ssize_t(command.size()))
            return true;
        error = errnoText("changeprofile \"" + policy.apparmor->profile + "\""
                                  + (err == ENOENT ? " (is the profile loaded?)" : ""),
                          err);
        return false;
    }
    error = errnoText("AppArmor is not enabled in this kernel (no AppArmor attribute in /proc)",
                      errno);
    return false;
}

} // namespace cmcp::jail
