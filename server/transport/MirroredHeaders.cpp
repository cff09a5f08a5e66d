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

// An argument mirrored into a header: the chain of `properties` keys that reaches it.
struct HeaderParameter
{
    QStringList path;
    QString header;
    QString type;
};

// The parameters of `schema` marked with x-mcp-header, reached through `properties` alone (the
// only place the annotation counts).
void collectHeaderParameters(const QJsonObject &schema, QStringList path,
                             QList<HeaderParameter> &found)
{
    const QJsonObject properties = schema.value(QLatin1String("properties")).toObject();
    for (auto it = properties.begin(); it != properties.end(); ++it) {
        const QJsonObject property = it.value().toObject();
        QStringList at = path;
        at.append(it.key());
        if (const QJsonValue header = property.value(QLatin1String("x-mcp-header"));
            header.isString())
            found.append({at, header.toString(), property.value(QLatin1String("type")).toString()});
        collectHeaderParameters(property, at, found);
    }
}

QJsonValue argumentAt(const QJsonObject &arguments, const QStringList &path)
{
    QJsonValue value = arguments;
    for (const QString &key : path)
        value = value.toObject().value(key);
    return value;
}

// Whether the header's text says what the body's value is: integers compare as numbers.
bool headerMatches(const QString &text, const QJsonValue &value, const QString &type)
{
    if (value.isString())
        return text == value.toString();
    if (value.isBool())
        return text == (value.toBool() ? QLatin1String("true") : QLatin1String("false"));
    if (value.isDouble() && type != QLatin1String("number")) {
        bool ok = false;
        const double number = text.toDouble(&ok);
        return ok && number == value.toDouble();
    }
    return false;
}

std::optional<RequestRejection> parameterHeadersMismatch(const QHttpServerRequest &request,
                                                         const jsonrpc::Message &message,
                                                         const ToolRegistry &tools)
{
    const QJsonObject params = message.params.toObject();
    const ToolDefinition *tool = tools.find(params.value(QLatin1String("name")).toString());
    if (!tool)
        return std::nullopt;
    QList<HeaderParameter> parameters;
    collectHeaderParameters(tool->inputSchema, {}, parameters);
    const QJsonObject arguments = params.value(QLatin1String("arguments")).toObject();
    for (const HeaderParameter &parameter : std::as_const(parameters)) {
        const QString name = QStringLiteral("Mcp-Param-") + parameter.header;
        const QByteArray header = request.value(name.toLatin1().toLower());
        const QJsonValue value = argumentAt(arguments, parameter.path);
        const QString where = QStringLiteral("params.arguments.") + parameter.path.join(u'.');
        const bool inBody = !value.isUndefined() && !value.isNull();
        if (header.trimmed().isEmpty()) {
            if (inBody)
                return mismatch(QStringLiteral("the %1 header is missing, and %2 is in the body")
                                        .arg(name, where));
            continue;
        }
        for (const char c : header) {
            if ((uchar(c) < 0x20 && c != '\t') || uchar(c) >= 0x7f)
                return mismatch(QStringLiteral("the %1 header holds characters a header value "
                                               "may not (encode the value as =?base64?...?=)")
                                        .arg(name));
        }
        const std::optional<QString> decoded = decodeHeaderValue(header);
        if (!decoded)
            return mismatch(QStringLiteral("the %1 header is not valid base64 of UTF-8").arg(name));
        if (!inBody)
            return mismatch(QStringLiteral("the %1 header is sent, but %2 is not in the body")
                                    .arg(name, where));
        if (!headerMatches(*decoded, value, parameter.type))
            return mismatch(QStringLiteral("%1 header value '%2' does not match body value of %3")
                                    .arg(name, *decoded, where));
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
    const QByteArray encoded =
            trimmed.mid(prefix.size(), trimmed.size() - prefix.size() - suffix.size());
    // Padded standard base64 only, as the specification's examples have it.
    const auto decoded =
            QByteArray::fromBase64Encoding(encoded, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || encoded.size() % 4 != 0)
        return std::nullopt;
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = utf8(*decoded);
    if (utf8.hasError())
        return std::nullopt;
    return text;
}

std::optional<RequestRejection> mirroredHeadersMismatch(const QHttpServerRequest &request,
                                                        const jsonrpc::Message &message,
                                                        const QString &metaVersion,
                                                        const ToolRegistry &tools)
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
        return parameterHeadersMismatch(request, message, tools);
    return std::nullopt;
}

} // namespace cmcp
