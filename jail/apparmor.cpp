// Layer: AppArmor. The job switches to the policy's profile when it execs (aa_change_onexec
// through libapparmor), so the profile confines the job's program from its first instruction
// and never the jail. The kernel checks that the profile is loaded when it is requested; a
// kernel without AppArmor, or AppArmor disabled, fails the layer (fail closed).
#include "jail/layers.h"

#include <sys/apparmor.h>

#include <cerrno>

namespace cmcp::jail {

bool applyApparmor(const Policy &policy, std::string &error)
{
    if (!policy.apparmor) {
        error = "no \"apparmor\" object in the policy";
        return false;
    }
    if (!::aa_is_enabled()) {
        error = errnoText("AppArmor is not enabled in this kernel (aa_is_enabled)", errno);
        return false;
    }
    if (::aa_change_onexec(policy.apparmor->profile.c_str()) != 0) {
        int err = errno;
        error = errnoText("aa_change_onexec(\"" + policy.apparmor->profile + "\")"
                                  + (err == ENOENT ? " (is the profile loaded?)" : ""),
                          err);
        return false;
    }
    return true;
}

} // namespace cmcp::jail
