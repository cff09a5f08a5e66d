#pragma once

#include "tools/common/ToolFamily.h"

namespace cmcp {

// Registers the named workspaces' tools (registerNamedWorkspaceTools), and workspace_checkpoint,
// workspace_checkpoints, workspace_restore, workspace_diff and workspace_checkpoint_delete on
// `server`, when workspaces live on the workspace volume (SANDBOX_WORKSPACE_QUOTA_MB and the volume
// available); without it they are not offered. Each works on the calling session's workspace (the
// shared one, or its own) and its checkpoints.
bool registerWorkspaceTools(const ToolFamily &family, QString *error);

} // namespace cmcp
