#include "transport/MirroredHeaders.h"

#include <QHttpServerRequest>
#include <QJsonObject>
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

// An argument as an Mcp-Param-* header carries it: strings as they are, booleans and integers
// in their JSON spelling; null for what no header can carry.
QString headerSpelling(const QJsonValue &argument)
{
    if (argument.isString())
        return argument.toString();
    if (argument.isBool())
        return argument.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    if (argument.isDouble() && argument.toDouble() == double(argument.toInteger()))
        return QString::number(argument.toInteger());
    return {};
}

// Mcp-Param-<Name> mirrors an argument that the tool's input schema marks with x-mcp-header (the
// job and output tools' handle, which a balancer routes on: common/ReplicaHandle.h). Each such
// header must carry the value of one of the call's arguments: a header naming what the body does
// not would send the call where it does not belong.
std::optional<RequestRejection> paramHeadersMismatch(const QHttpServerRequest &request,
                                                     const jsonrpc::Message &message)
{
    static constexpr QByteArrayView prefix = "mcp-param-";
    const QJsonObject arguments =
            message.params.toObject().value(QLatin1String("arguments")).toObject();
    for (const auto &[name, value] : request.headers()) {
        if (!name.toLower().startsWith(prefix))
            continue;
        const QString header = QString::fromLatin1(name);
        const std::optional<QString> decoded = decodeHeaderValue(value);
        if (!decoded)
            return mismatch(
                    QStringLiteral("the %1 header is not valid base64 of UTF-8").arg(header));
        bool named = false;
        for (auto it = arguments.begin(); it != arguments.end() && !named; ++it)
            named = headerSpelling(it.value()) == *decoded;
        if (!named)
            return mismatch(QStringLiteral("%1 header value '%2' is not the value of an argument "
                                           "of the call")
                                    .arg(header, *decoded));
    }
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
    if (message.method == QLatin1String("tools/call"))
        return paramHeadersMismatch(request, message);
    return std::nullopt;
}

} // namespace cmcp
