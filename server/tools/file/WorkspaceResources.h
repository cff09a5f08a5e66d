#pragma once

#include <QString>

#include <memory>

namespace cmcp {

class FileManager;
class ResourceRegistry;
class SessionFileManagers;
class WorkspacePath;

// The workspace's files as MCP resources: each regular file with an allowed extension is
// listed as file:///<path> (resources/list, bounded by FILE_LIST_MAX_ENTRIES), and the template
// file:///{+path} reads any of them, as text when its MIME type is textual and it decodes as
// UTF-8, otherwise as a base64 blob. Reads go through the FileManager, hence through the same
// kernel containment and checks as file_read.
//
// The files of the calling principal's named workspaces are resources too, as
// workspace://<workspace_id>/<path> (the template workspace://{workspace}/{+path}, which also
// takes the workspace's name): only their owner lists or reads them, and for anyone else a
// workspace answers as one that does not exist.
namespace workspaceresources {

// Each request is answered from the calling session's workspace (ResourceRegistry::callingSession).
void registerOn(ResourceRegistry &registry, SessionFileManagers *managers);

// file:///a/b%20c.txt for "a/b c.txt".
QString uriFor(const QString &workspacePath);
// workspace://ws_…/a/b%20c.txt for "a/b c.txt" of the named workspace ws_….
QString namedUriFor(const QString &workspaceId, const QString &workspacePath);
QString mimeTypeFor(const QString &name);

} // namespace workspaceresources

} // namespace cmcp
