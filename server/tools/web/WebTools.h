#pragma once

#include "tools/common/ToolFamily.h"

namespace cmcp {

// Registers web_search, web_scrape and web_browse on `server`, all behind one egress gate built
// from the WEB_* settings. False with a reason when a setting cannot be used (an unreadable
// WEB_ALLOWED_DOMAINS entry), which must stop start-up. With `live`, the egress rules and limits
// can be replaced while the daemon runs. A root daemon's browser workers run in the jail with
// the layers `sandbox` says this kernel has (BrowserConfinement.h).
bool registerWebTools(const ToolFamily &family, QString *error);

} // namespace cmcp
