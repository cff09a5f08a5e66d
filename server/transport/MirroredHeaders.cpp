#include "transport/MirroredHeaders.h"

#include <QHttpServerRequest>
#include <QStringDecoder>

namespace cmcp {

namespace {

RequestRejection mismatch(const QString &problem)
{
    return {jsonrpc::HeaderMismatch, QStringLiteral("Header mismatch: %1").arg(problem)};
}

// The Tasks extension's methods name their task in Mcp-Name, which clients need not send: it is
// checked when present.
bool namesTask(const jsonrpc::Message &message)
{
    return message.method == QLatin1String("tasks/get")
            || message.method == QLatin1String("tasks/update")
            || message.method == QLatin1String("tasks/cancel");
}

// What Mcp-Name must carry for `method`, or nullopt when the method has no name header.
std::optional<QString> nameSource(const jsonrpc::Message &message)
{
    const QJsonObject params = message.params.toObject();
    if (message.method == QLatin1String("tools/call")
        || message.method == QLatin1String("prompts/get"))
        return params.value(QLatin1String("name")).toString();
    if (message.method == QLatin1String("resources/read"))
        return params.value(QLatin1String("uri")).toString();
    if (namesTask(message))
        return params.value(QLatin1String("taskId")).toString();
    return std::nullopt;
}

} // namespace

std::optional<QString> decodeHeaderValue(const QByteArray &value)
{
    const QByteArray trimmed = value.trimmed();
    static constexpr QByteArrayView prefix = "=?base64?";
    static constexpr QByteArrayView suffix = "?=";
    if (!trimmed.startsWith(prefix) || !trimmed.endsWith(suffix)
        || trimmed.size() < prefix.size() + suffix.size())
        return QString::fromLatin1(trimmed);
    const auto decoded = QByteArray::fromBase64Encoding(
            trimmed.mid(prefix.size(), trimmed.size() - prefix.size() - suffix.size()),
            QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return std::nullopt;
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = utf8(*decoded);
    if (utf8.hasError())
        return std::nullopt;
    return text;
}

std::optional<RequestRejection> mirroredHeadersMismatch(const QHttpServerRequest &request,
                                                        const jsonrpc::Message &message,
                                                        const QString &metaVersion)
{
    const QByteArray version = request.value("mcp-protocol-version").trimmed();
    if (version.isEmpty())
        return mismatch(QStringLiteral("the MCP-Protocol-Version header is missing"));
    if (QString::fromLatin1(version) != metaVersion)
        return mismatch(QStringLiteral("MCP-Protocol-Version header value '%1' does not match "
                                       "body value '%2'")
                                .arg(QString::fromLatin1(version), metaVersion));
    const QByteArray method = request.value("mcp-method").trimmed();
    if (method.isEmpty())
        return mismatch(QStringLiteral("the Mcp-Method header is missing"));
    if (QString::fromLatin1(method) != message.method)
        return mismatch(QStringLiteral("Mcp-Method header value '%1' does not match body value "
                                       "'%2'")
                                .arg(QString::fromLatin1(method), message.method));
    const std::optional<QString> expectedName = nameSource(message);
    if (!expectedName)
        return std::nullopt;
    const QByteArray name = request.value("mcp-name");
    if (name.trimmed().isEmpty() && namesTask(message))
        return std::nullopt;
    if (name.trimmed().isEmpty())
        return mismatch(
                QStringLiteral("the Mcp-Name header is missing (%1 needs it)").arg(message.method));
    const std::optional<QString> decoded = decodeHeaderValue(name);
    if (!decoded)
        return mismatch(QStringLiteral("the Mcp-Name header is not valid base64 of UTF-8"));
    if (*decoded != *expectedName)
        return mismatch(QStringLiteral("Mcp-Name header value '%1' does not match body value "
                                       "'%2'")
                                .arg(*decoded, *expectedName));
    return std::nullopt;
}

} // namespace cmcp
