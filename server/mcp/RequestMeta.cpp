#include "mcp/RequestMeta.h"

#include "mcp/ProtocolVersion.h"

#include <QJsonArray>

namespace cmcp {

namespace {

RequestRejection invalidMeta(const QString &problem)
{
    return {jsonrpc::InvalidParams,
            QStringLiteral("%1 (protocol revision %2 wants it on every request)")
                    .arg(problem, protocol::modernVersions().first())};
}

} // namespace

bool isStatelessRequest(const jsonrpc::Message &message)
{
    if (message.kind != jsonrpc::MessageKind::Request)
        return false;
    if (message.method == QLatin1String("server/discover"))
        return true;
    return message.params.toObject()
            .value(QLatin1String("_meta"))
            .toObject()
            .contains(QLatin1String(requestmeta::ProtocolVersionKey));
}

std::variant<RequestMeta, RequestRejection> readRequestMeta(const QJsonValue &params)
{
    const QJsonValue metaValue = params.toObject().value(QLatin1String("_meta"));
    if (!metaValue.isObject())
        return invalidMeta(QStringLiteral("params._meta is missing"));
    const QJsonObject meta = metaValue.toObject();
    RequestMeta read;
    const QJsonValue version = meta.value(QLatin1String(requestmeta::ProtocolVersionKey));
    if (!version.isString())
        return invalidMeta(QStringLiteral("params._meta[\"%1\"] is missing or not a string")
                                   .arg(QLatin1String(requestmeta::ProtocolVersionKey)));
    read.protocolVersion = version.toString();
    const QJsonValue capabilities = meta.value(QLatin1String(requestmeta::ClientCapabilitiesKey));
    if (!capabilities.isObject())
        return invalidMeta(QStringLiteral("params._meta[\"%1\"] is missing or not an object")
                                   .arg(QLatin1String(requestmeta::ClientCapabilitiesKey)));
    read.clientCapabilities = capabilities.toObject();
    const QJsonValue clientInfo = meta.value(QLatin1String(requestmeta::ClientInfoKey));
    if (!clientInfo.isUndefined() && !clientInfo.isObject())
        return invalidMeta(QStringLiteral("params._meta[\"%1\"] is not an object")
                                   .arg(QLatin1String(requestmeta::ClientInfoKey)));
    read.clientInfo = clientInfo.toObject();
    const QJsonValue level = meta.value(QLatin1String(requestmeta::LogLevelKey));
    if (!level.isUndefined()) {
        read.logLevel = parseLogLevel(level.toString());
        if (!read.logLevel)
            return invalidMeta(QStringLiteral("params._meta[\"%1\"] is not a log level (debug, "
                                              "info, notice, warning, error, critical, alert, "
                                              "emergency)")
                                       .arg(QLatin1String(requestmeta::LogLevelKey)));
    }
    return read;
}

RequestRejection unsupportedVersion(const QString &requested)
{
    return {jsonrpc::UnsupportedProtocolVersion,
            QStringLiteral("Unsupported protocol version %1 (supported: %2; the 2025 revisions "
                           "through initialize)")
                    .arg(requested, protocol::allVersions().join(QLatin1String(", "))),
            QJsonObject{{QLatin1String("supported"),
                         QJsonArray::fromStringList(protocol::allVersions())},
                        {QLatin1String("requested"), requested}}};
}

QJsonObject rejectionResponse(const QJsonValue &id, const RequestRejection &rejection)
{
    QJsonObject response =
            jsonrpc::makeError(id, rejection.code, rejection.message, rejection.data);
    if (id.isUndefined())
        response.remove(QLatin1String("id"));
    return response;
}

} // namespace cmcp
