#pragma once

#include <QString>

#include <memory>

namespace cmcp {

class AdminServer;
class AdminSettings;
class LiveSettings;
class McpServer;
class Settings;
struct SandboxCapabilities;

// Opens the admin channel as ADMIN_SOCKET and ADMIN_GROUP say, with the daemon's log forwarded
// to it. Null when ADMIN_SOCKET=off, and null with a warning logged when the socket cannot be
// opened (another daemon holds it, say): the MCP service does not depend on it.
std::unique_ptr<AdminServer> openAdminChannel(McpServer &mcp, AdminSettings &settings,
                                              const SandboxCapabilities &sandbox);

// The settings the daemon applies while running: the log level, and those the tools registered
// in `tools` when they were built.
void registerLiveSettings(AdminSettings &settings, const LiveSettings &tools);

} // namespace cmcp
