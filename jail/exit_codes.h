// cmcp-jail exit statuses: one per step, so the supervisor can tell which layer failed closed.
//
// The range 90-99 is used because it collides neither with the shell's 126/127 ("not
// executable"/"not found"), nor with 128+N (killed by signal N), nor with the small
// codes ordinary programs use. A job can still exit with one of these codes on its own:
// the supervisor tells the two apart with --report-fd (a "refused" record when the jail itself
// failed, "started" and "exit" records when the job ran; see report.h).
//
// The codes are per layer and stable; they do not encode the order in which the layers
// are applied (main.cpp is the one place that defines that order).
#pragma once

namespace cmcp::jail {

enum ExitCode : int {
    kExitUsage = 90, // bad command line (unknown option, no program, unreadable --policy-fd)
    kExitPolicy = 91, // policy missing, malformed, or refused by validation
    kExitIdentity =
            92, // uid/gid switch, groups, no_new_privs, capabilities, session, pdeathsig, fds
    kExitRlimits = 93, // setrlimit failed (e.g. a limit above the current hard limit)
    kExitCgroup = 94, // cgroup: no writable controller for a limit, or joining the cgroup failed
    kExitNamespaces = 95, // namespaces, id maps, the minimal root, loopback, hostname
    kExitLandlock = 96, // Landlock: not in the kernel, ABI too old for the policy, or a rule failed
    kExitSeccomp = 97, // seccomp: building or loading the filter failed
    kExitApparmor = 98, // AppArmor not enabled, or the profile not loaded
    kExitExec = 99, // working directory, program lookup, or execve itself failed
};

} // namespace cmcp::jail
