#include "sandbox/WorkspaceIdmap.h"

#include "common/SandboxIds.h"
#include "posix/ErrnoText.h"
#include "posix/IdmappedMount.h"

#include <QFile>

#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

WorkspaceIdmap::WorkspaceIdmap(uid_t workspaceUid, gid_t gid)
    : m_workspaceUid(workspaceUid),
      m_gid(gid)
{
}

QString WorkspaceIdmap::unavailableReason(const QString &directory, uid_t workspaceUid, gid_t gid)
{
    if (workspaceUid == SandboxIds::kNoUid)
        return QStringLiteral("no uid is left after the pool and the browser worker's for the "
                              "workspaces' owner: set SANDBOX_WORKSPACE_UID");
    if (::geteuid() != 0)
        return QStringLiteral("needs a root daemon (jobs keep the daemon's uid, which owns the "
                              "workspace already)");
    const UniqueFd fd(
            ::open(QFile::encodeName(directory).constData(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd.isValid())
        return QStringLiteral("cannot open %1: %2").arg(directory, errnoText(errno));
    std::string error;
    const UniqueFd idmap = makeIdmapNamespace(workspaceUid, workspaceUid, gid, gid, error);
    if (!idmap.isValid())
        return QString::fromStdString(error);
    if (!cloneIdmappedTree(fd.get(), idmap.get(), error).isValid())
        return QStringLiteral("%1 cannot be idmapped: %2")
                .arg(directory, QString::fromStdString(error));
    return {};
}

UniqueFd WorkspaceIdmap::viewFor(const QString &workspacePath, uid_t jobUid, QString *error)
{
    // Made for this view and dropped with it (the mount keeps what it needs): nothing is held
    // per pool uid between jobs.
    std::string why;
    const UniqueFd idmap = makeIdmapNamespace(m_workspaceUid, jobUid, m_gid, m_gid, why);
    if (!idmap.isValid()) {
        *error = QStringLiteral("the idmapping for uid %1: %2")
                         .arg(jobUid)
                         .arg(QString::fromStdString(why));
        return {};
    }
    // By the daemon's path, as the jail's monitor opens the workspace: SANDBOX_ROOT and the
    // directories below it that hold workspaces are root's; the last component, the workspace
    // itself, is not followed should it be a link.
    const UniqueFd workspace(::open(QFile::encodeName(workspacePath).constData(),
                                    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!workspace.isValid()) {
        *error = QStringLiteral("cannot open the workspace %1: %2")
                         .arg(workspacePath, errnoText(errno));
        return {};
    }
    UniqueFd view = cloneIdmappedTree(workspace.get(), idmap.get(), why);
    if (!view.isValid())
        *error = QStringLiteral("the workspace %1 as the job's own: %2")
                         .arg(workspacePath, QString::fromStdString(why));
    return view;
}

} // namespace cmcp
