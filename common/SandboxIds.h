#pragma once

#include <sys/types.h>

namespace cmcp {

class Settings;

// The host ids of the sandbox, from the SANDBOX_* settings with their defaults resolved: the
// pool of uids jobs run as, the one gid they share, and the uid that owns the workspaces' files
// on disk (no job's: a job sees them as its own through an idmapped mount).
struct SandboxIds
{
    uid_t uidBase = 100000;
    uid_t uidCount = 1000;
    gid_t gid = 100000;
    uid_t workspaceUid = 101000;

    static SandboxIds fromSettings(const Settings &settings);
};

} // namespace cmcp
