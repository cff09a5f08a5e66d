#include "admin/WorkspaceDescription.h"

#include "mcp/McpServer.h"
#include "workspace/SessionWorkspaces.h"
#include "workspace/WorkspaceCheckpoints.h"

#include <QFileInfo>

#include <algorithm>

namespace cmcp {

namespace {

// The fields every kind shares: where it is, what it holds, its checkpoints and jobs.
admin::WorkspaceRecord measured(const SessionWorkspaces &workspaces, const Workspace &workspace,
                                const char *kind)
{
    admin::WorkspaceRecord record;
    record.kind = QLatin1String(kind);
    record.workspaceId = QFileInfo(workspace.path()).fileName();
    record.path = workspace.path();
    record.usedBytes = workspace.usedBytes();
    record.quotaBytes = workspace.quotaBytes();
    const WorkspaceCheckpoints checkpoints(workspace);
    if (checkpoints.unsupportedReason().isEmpty()) {
        QString error;
        if (const auto list = checkpoints.list(&error))
            record.checkpoints = int(list->size());
    }
    record.jobsRunning = workspaces.jobsIn(workspace);
    return record;
}

} // namespace

admin::ListWorkspacesResult describeWorkspaces(const SessionWorkspaces &workspaces,
                                               const McpServer &mcp)
{
    admin::ListWorkspacesResult result;
    for (const NamedWorkspace &named : workspaces.named().all()) {
        admin::WorkspaceRecord record =
                measured(workspaces, named.workspace, admin::workspaceNamed);
        record.workspaceId = named.id;
        record.name = named.name;
        record.owner = named.owner;
        record.created = named.created;
        record.lastUsed = named.lastUsed;
        result.workspaces.append(record);
    }
    admin::WorkspaceRecord shared =
            measured(workspaces, workspaces.shared(), admin::workspaceShared);
    shared.name = QLatin1String(admin::workspaceShared);
    result.workspaces.append(shared);
    const QHash<QString, QString> &sessions = workspaces.sessionDirectories();
    for (auto each = sessions.cbegin(); each != sessions.cend(); ++each) {
        admin::WorkspaceRecord record = measured(
                workspaces, workspaces.shared().sibling(each.value()), admin::workspaceSession);
        record.name = each.key();
        if (const auto session = mcp.findSession(each.key()))
            record.owner = session->principal().name();
        result.workspaces.append(record);
    }
    return result;
}

bool isUnnamedWorkspace(const SessionWorkspaces &workspaces, const QString &workspaceId)
{
    if (workspaceId == QFileInfo(workspaces.shared().path()).fileName())
        return true;
    const QHash<QString, QString> &sessions = workspaces.sessionDirectories();
    return std::any_of(sessions.cbegin(), sessions.cend(), [&workspaceId](const QString &path) {
        return QFileInfo(path).fileName() == workspaceId;
    });
}

} // namespace cmcp
