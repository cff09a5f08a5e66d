#pragma once

#include <QString>

namespace cmcp {

class LiveSettings;
class McpServer;
class Settings;
struct SandboxCapabilities;

// Registers web_search, web_scrape and web_browse on `server`, all behind one egress gate built
// from the WEB_* settings. False with a reason when a setting cannot be used (an unreadable
// WEB_ALLOWED_DOMAINS entry), which must stop start-up. With `live`, the egress rules and limits
// can be replaced while the daemon runs. A root daemon's browser workers run in the jail with
// the layers `sandbox` says this kernel has (BrowserConfinement.h).
bool registerWebTools(McpServer &server, const Settings &settings,
                      const SandboxCapabilities &sandbox, QString *error,
                      LiveSettings *live = nullptr);

} // namespace cmcp
