#pragma once

#include "mcp/JsonRpc.h"
#include "mcp/RequestMeta.h"
#include "mcp/ToolRegistry.h"

#include <optional>

class QHttpServerRequest;

namespace cmcp {

// The modern era's Streamable HTTP mirrors parts of the body into headers (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name) so that intermediaries can route without parsing it. A server that reads
// the body must refuse a request whose headers say something else (HeaderMismatch, -32020): a
// proxy routing on the header and the server acting on the body would disagree otherwise.
// Names are case-insensitive, values are trimmed, and Mcp-Name may be "=?base64?...?=".
// A tools/call also mirrors the arguments its tool's inputSchema marks with x-mcp-header into
// Mcp-Param-{name} headers, which must be there exactly when the argument is.
std::optional<RequestRejection> mirroredHeadersMismatch(const QHttpServerRequest &request,
                                                        const jsonrpc::Message &message,
                                                        const QString &metaVersion,
                                                        const ToolRegistry &tools);

// An Mcp-Name (or Mcp-Param-*) value as the body would have it: base64 sentinels decoded;
// nullopt when the sentinel does not hold valid padded base64 of UTF-8.
std::optional<QString> decodeHeaderValue(const QByteArray &value);

} // namespace cmcp
