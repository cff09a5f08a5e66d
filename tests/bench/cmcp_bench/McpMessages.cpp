#include "McpMessages.h"

#include <cctype>
#include <cstdlib>

namespace cmcp::bench {

const std::string initializeBody =
        std::string(
                R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":")")
        + protocolVersion
        + R"(","capabilities":{},"clientInfo":{"name":"cmcp-bench","version":"1"}}})";
const std::string initializedBody = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

std::string callBody(long id)
{
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id)
            + R"(,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}})";
}

std::string pingBody(long id)
{
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"ping"})";
}

bool hasId(const std::string &json, long id)
{
    const std::string needle = "\"id\":" + std::to_string(id);
    size_t at = 0;
    while ((at = json.find(needle, at)) != std::string::npos) {
        const size_t after = at + needle.size();
        if (after >= json.size() || !std::isdigit(static_cast<unsigned char>(json[after])))
            return true;
        at = after;
    }
    return false;
}

bool callAnswered(const std::string &json, long id)
{
    return hasId(json, id) && json.find("\"result\"") != std::string::npos
            && json.find("This is a simple text response for testing.") != std::string::npos;
}

bool streamableHandshake(HttpConn &conn, int port, std::string &sessionId, const Deadline &deadline,
                         std::string *error)
{
    HttpResponse response;
    if (!conn.roundTrip(httpPost(port, "/mcp", initializeBody, {}), response, deadline)
        || response.status != 200) {
        *error = "initialize failed (HTTP " + std::to_string(response.status) + ")";
        return false;
    }
    sessionId = headerValue(response.head, "mcp-session-id");
    if (sessionId.empty() || !hasId(response.body, 0)) {
        *error = "initialize gave no Mcp-Session-Id";
        return false;
    }
    if (!conn.roundTrip(httpPost(port, "/mcp", initializedBody, sessionId), response, deadline)
        || response.status != 202) {
        *error = "notifications/initialized was not answered 202 (HTTP "
                + std::to_string(response.status) + ")";
        return false;
    }
    return true;
}

// A daemon that serves answers 200, "ok" or "degraded" (a tool family it cannot offer, such as
// web_browse without its worker, which the bench does not call).
int healthSessions(int port, const Deadline &deadline)
{
    HttpConn conn;
    HttpResponse response;
    if (!conn.open(port)
        || !conn.roundTrip(httpGet(port, "/health", "application/json"), response, deadline)
        || response.status != 200
        || (response.body.find("\"status\":\"ok\"") == std::string::npos
            && response.body.find("\"status\":\"degraded\"") == std::string::npos))
        return -1;
    const size_t at = response.body.find("\"sessions\":");
    return at == std::string::npos ? -1 : std::atoi(response.body.c_str() + at + 11);
}

} // namespace cmcp::bench
