#pragma once

#include <QtGlobal>

#include <sys/types.h>

namespace cmcp {

class Settings;

// The host ids of the sandbox, from the SANDBOX_* settings with their defaults resolved: the
// pool of uids jobs run as, the one gid they share, and the uid that owns the workspaces' files
// on disk (no job's: a job sees them as its own through an idmapped mount); kNoUid when the
// default would lie past the highest uid, and then workspaces keep the owners of old.
struct SandboxIds
{
    static constexpr qint64 kHighestUid = 4294967293;
    static constexpr uid_t kNoUid = uid_t(-1);

    uid_t uidBase = 100000;
    uid_t uidCount = 1000;
    gid_t gid = 100000;
    uid_t workspaceUid = 101001;

    static SandboxIds fromSettings(const Settings &settings);
};

} // namespace cmcp
