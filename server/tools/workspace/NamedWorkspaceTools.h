#pragma once

namespace cmcp {

class McpServer;
class Settings;

// Registers workspace_create, workspace_list, workspace_open and workspace_delete on `server`,
// and workspace_fork when workspaces can have checkpoints (`canFork`): the named workspaces of
// the calling principal (NamedWorkspaces), which only it reaches.
void registerNamedWorkspaceTools(McpServer &server, const Settings &settings, bool canFork);

} // namespace cmcp
