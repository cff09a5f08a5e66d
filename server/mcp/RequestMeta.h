#pragma once

#include "mcp/JsonRpc.h"
#include "mcp/LogLevel.h"

#include <QJsonObject>
#include <QString>

#include <optional>
#include <variant>

// What a request of the modern era (2026-07-28 on) says about itself in params._meta: there is
// no initialize, so every request carries its protocol version and client capabilities.
namespace cmcp {

struct RequestMeta
{
    QString protocolVersion;
    QJsonObject clientCapabilities;
    QJsonObject clientInfo; // optional: clients should send it, servers must not require it
    std::optional<LogLevel> logLevel; // no notifications/message at all without it
};

// Why a request cannot be served, as the JSON-RPC error its client gets.
struct RequestRejection
{
    int code;
    QString message;
    QJsonValue data = QJsonValue::Undefined;
};

namespace requestmeta {
inline constexpr char ProtocolVersionKey[] = "io.modelcontextprotocol/protocolVersion";
inline constexpr char ClientCapabilitiesKey[] = "io.modelcontextprotocol/clientCapabilities";
inline constexpr char ClientInfoKey[] = "io.modelcontextprotocol/clientInfo";
inline constexpr char LogLevelKey[] = "io.modelcontextprotocol/logLevel";
inline constexpr char ServerInfoKey[] = "io.modelcontextprotocol/serverInfo";
} // namespace requestmeta

// True when `message` is a request of the modern era: its _meta names a protocol version, or it
// is server/discover (which exists only there).
bool isStatelessRequest(const jsonrpc::Message &message);

// The request's _meta, or -32602 naming the field that is missing or malformed. The version is
// not checked against the ones served here (see unsupportedVersion).
std::variant<RequestMeta, RequestRejection> readRequestMeta(const QJsonValue &params);

// UnsupportedProtocolVersionError (-32022), listing every version served here.
RequestRejection unsupportedVersion(const QString &requested);

// The error response for `rejection`; `id` undefined leaves the id out.
QJsonObject rejectionResponse(const QJsonValue &id, const RequestRejection &rejection);

} // namespace cmcp
