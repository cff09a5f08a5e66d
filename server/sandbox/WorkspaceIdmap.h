#pragma once

#include "posix/UniqueFd.h"

#include <QString>

#include <sys/types.h>

namespace cmcp {

// A workspace as one user's home. Every workspace's files are owned on disk by one uid that no
// job ever runs as (SANDBOX_WORKSPACE_UID), and each job sees its workspace through an
// idmapped mount made for it that shows that uid as the job's own pool uid, which the job's
// user namespace shows as uid 1000: whichever pool uid a call runs as, the files of earlier
// calls and of the file tools are its own (git, chmod, a 0600 file), and what it creates is
// stored owned by the workspace uid again.
//
// Why this keeps jobs apart as well as distinct owners did: what separates two jobs' files is
// what each can name, not who owns them. A job's mount namespace holds exactly one workspace,
// its own, and the view made for it maps the workspace uid to that job's uid alone; another
// workspace is in none of its mounts. On the host, a job's uid is never the workspace uid, so a
// path it might learn of another tree gives it no owner's rights there. Signals, /proc and the
// cgroup still rest on the per-call pool uid, which is unchanged.
class WorkspaceIdmap
{
public:
    WorkspaceIdmap(uid_t workspaceUid, gid_t gid);

    // Why jobs cannot see workspaces in `directory` (where they are kept) as their own here; empty
    // when they can: root, and a file system the kernel can idmap.
    static QString unavailableReason(const QString &directory, uid_t workspaceUid, gid_t gid);

    // A detached idmapped view of the workspace at `workspacePath` for a job running as
    // `jobUid` (IdmappedMount.h), for the job to attach where its workspace goes. Invalid, with
    // `error`, when it cannot be made.
    UniqueFd viewFor(const QString &workspacePath, uid_t jobUid, QString *error);

    uid_t workspaceUid() const { return m_workspaceUid; }

private:
    const uid_t m_workspaceUid;
    const gid_t m_gid;
};

} // namespace cmcp
