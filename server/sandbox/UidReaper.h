#pragma once

#include <QString>

#include <sys/types.h>

namespace cmcp {

// Kills every process that runs as `uid`: whatever a job left behind, setsid'd and double-forked
// descendants included, even without a pid namespace or cgroup to find them by. Sound because
// the uid pool gives each running job a uid of its own. Needs CAP_SETUID and CAP_KILL (root);
// refuses uid 0 and the daemon's own uid. Takes about a millisecond (one fork).
class UidReaper
{
public:
    // Whether this process may reap at all (it runs as root).
    static bool canReap();
    // False, with the reason, when the processes could not all be signalled.
    static bool killAllProcessesOf(uid_t uid, QString *error);
};

} // namespace cmcp
