// The MCP messages cmcp-bench sends (a tools/call of the conformance fixture test_simple_text)
// and the checks on what comes back.
#pragma once

#include "Harness.h"
#include "LeanHttp.h"

#include <string>

namespace cmcp::bench {

extern const std::string initializeBody;
extern const std::string initializedBody;

std::string callBody(long id);
std::string pingBody(long id);
// Whether `json` holds "id":<id> (and not a longer number).
bool hasId(const std::string &json, long id);
// Whether `json` is test_simple_text's answer to call `id`.
bool callAnswered(const std::string &json, long id);

// Streamable HTTP: initialize, then notifications/initialized; returns the session id.
bool streamableHandshake(HttpConn &conn, int port, std::string &sessionId, const Deadline &deadline,
                         std::string *error);
// The session count /health reports, -1 when it does not answer "ok".
int healthSessions(int port, const Deadline &deadline);

} // namespace cmcp::bench
