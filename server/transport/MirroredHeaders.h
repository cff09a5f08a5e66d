#pragma once

#include "mcp/JsonRpc.h"
#include "mcp/RequestMeta.h"

#include <optional>

class QHttpServerRequest;

namespace cmcp {

// The modern era's Streamable HTTP mirrors parts of the body into headers (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name) so that intermediaries can route without parsing it. A server that reads
// the body must refuse a request whose headers say something else (HeaderMismatch, -32020): a
// proxy routing on the header and the server acting on the body would disagree otherwise.
// The same holds for the Mcp-Param-* headers of a tools/call: each must carry the value of one
// of the call's arguments. Names are case-insensitive, values are trimmed, and Mcp-Name and
// Mcp-Param-* may be "=?base64?...?=".
std::optional<RequestRejection> mirroredHeadersMismatch(const QHttpServerRequest &request,
                                                        const jsonrpc::Message &message,
                                                        const QString &metaVersion);

// An Mcp-Name (or Mcp-Param-*) value as the body would have it: base64 sentinels decoded;
// nullopt when the sentinel does not hold valid base64 of UTF-8.
std::optional<QString> decodeHeaderValue(const QByteArray &value);

} // namespace cmcp
