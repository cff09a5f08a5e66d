#pragma once

#include <QString>

namespace cmcp {

class McpServer;
class Settings;

// Registers web_search, web_scrape and web_browse on `server`, all behind one egress gate built
// from the WEB_* settings. False with a reason when a setting cannot be used (an unreadable
// WEB_ALLOWED_DOMAINS entry), which must stop start-up.
bool registerWebTools(McpServer &server, const Settings &settings, QString *error);

} // namespace cmcp
