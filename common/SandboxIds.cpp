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
    // 0: the uid after the browser worker's, which is the first after the pool (BrowserAccount):
    // the worker that renders untrusted pages must own no workspace.
    const qint64 owner = settings.integer(u"SANDBOX_WORKSPACE_UID");
    const qint64 chosen = owner != 0 ? owner : qint64(ids.uidBase) + ids.uidCount + 1;
    ids.workspaceUid = chosen <= kHighestUid ? uid_t(chosen) : kNoUid;
    return ids;
}

} // namespace cmcp
