#pragma once

#include "tools/common/ToolFamily.h"

namespace cmcp {

// Registers port_publish, port_list and port_revoke over family.ports: a port of one of this
// session's running background jobs published at a URL of the daemon's HTTP listener, listed
// and revoked by the principal that published it.
bool registerPortTools(const ToolFamily &family, QString *error);

} // namespace cmcp
