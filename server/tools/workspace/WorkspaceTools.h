#pragma once

namespace cmcp {

class McpServer;
class Settings;

// Registers the named workspaces' tools (registerNamedWorkspaceTools), and workspace_checkpoint,
// workspace_checkpoints, workspace_restore, workspace_diff and workspace_checkpoint_delete on
// `server`, when workspaces live on the workspace volume (SANDBOX_WORKSPACE_QUOTA_MB and the volume
// available); without it they are not offered. Each works on the calling session's workspace (the
// shared one, or its own) and its checkpoints.
void registerWorkspaceTools(McpServer &server, const Settings &settings);

} // namespace cmcp
