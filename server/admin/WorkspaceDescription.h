#pragma once

#include "common/AdminWorkspaceRecords.h"

namespace cmcp {

class McpServer;
class SessionWorkspaces;

// What the console's workspace view lists: every principal's named workspaces (owner, usage
// against quota, checkpoints, last use, jobs), then the shared workspace, then the workspaces
// of the sessions that have one of their own now (SANDBOX_WORKSPACE=session), owned by their
// session's principal. Usage is measured only on the workspace volume (btrfs qgroups).
admin::ListWorkspacesResult describeWorkspaces(const SessionWorkspaces &workspaces,
                                               const McpServer &mcp);

// Whether `workspaceId` names the shared workspace or a session's own (not a named one).
bool isUnnamedWorkspace(const SessionWorkspaces &workspaces, const QString &workspaceId);

} // namespace cmcp
