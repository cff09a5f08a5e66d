#pragma once

#include "egress/EgressGate.h"

#include <memory>

namespace cmcp {

// What web_scrape and web_search may reach and how much: the egress gate (WEB_ALLOWED_DOMAINS,
// WEB_ALLOW_PRIVATE and the search back ends' origins), WEB_MAX_BYTES and WEB_TIMEOUT_DEFAULT.
// Immutable; the admin channel replaces it whole (a LiveSnapshot), and a fetch keeps the one it
// began with through all its redirects.
struct WebPolicy
{
    std::shared_ptr<const EgressGate> gate; // null: the fetcher's own gate
    qint64 maxBytes = 10 * 1024 * 1024;
    int timeoutMs = 30000;
};

} // namespace cmcp
