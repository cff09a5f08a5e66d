#include "common/SandboxIds.h"

#include "common/Settings.h"

namespace cmcp {

SandboxIds SandboxIds::fromSettings(const Settings &settings)
{
    SandboxIds ids;
    ids.uidBase = uid_t(settings.integer(u"SANDBOX_UID_BASE"));
    ids.uidCount = uid_t(settings.integer(u"SANDBOX_UID_COUNT"));
    const qint64 gid = settings.integer(u"SANDBOX_GID");
    ids.gid = gid == 0 ? gid_t(ids.uidBase) : gid_t(gid);
    const qint64 owner = settings.integer(u"SANDBOX_WORKSPACE_UID");
    ids.workspaceUid = owner == 0 ? ids.uidBase + ids.uidCount : uid_t(owner);
    return ids;
}

} // namespace cmcp
