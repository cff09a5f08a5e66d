#include "mcp/JsonRpc.h"

#include "mcp/JsonWriter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <limits>

namespace cmcp::jsonrpc {

namespace {

bool isValidId(const QJsonValue &id)
{
    // MCP forbids null ids; JSON-RPC allows only strings and numbers besides.
    return id.isString() || id.isDouble();
}

Message invalid(const QJsonObject &object, const QJsonValue &id, const QString &reason)
{
    Message message;
    message.kind = MessageKind::Invalid;
    message.object = object;
    message.id = isValidId(id) ? id : QJsonValue(QJsonValue::Null);
    message.invalidReason = reason;
    return message;
}

} // namespace

Message classify(const QJsonValue &value)
{
    if (!value.isObject())
        return invalid({}, QJsonValue::Null,
                       QStringLiteral("a JSON-RPC message must be a JSON object"));

    const QJsonObject object = value.toObject();
    const QJsonValue id = object.value(QLatin1String("id"));
    if (object.value(QLatin1String("jsonrpc")) != QLatin1String("2.0"))
        return invalid(object, id, QStringLiteral("\"jsonrpc\" must be \"2.0\""));

    const bool hasId = object.contains(QLatin1String("id"));
    // A peer that could not read a request's id answers its error with a null id (JSON-RPC 5.1).
    const bool errorWithoutId = id.isNull() && object.contains(QLatin1String("error"))
            && !object.contains(QLatin1String("method"))
            && !object.contains(QLatin1String("result"));
    if (hasId && !isValidId(id) && !errorWithoutId)
        return invalid(object, QJsonValue::Null,
                       QStringLiteral("\"id\" must be a string or a number"));

    const QJsonValue params = object.value(QLatin1String("params"));
    if (object.contains(QLatin1String("method"))) {
        const QJsonValue method = object.value(QLatin1String("method"));
        if (!method.isString() || method.toString().isEmpty())
            return invalid(object, id, QStringLiteral("\"method\" must be a non-empty string"));
        if (object.contains(QLatin1String("params")) && !params.isObject() && !params.isArray())
            return invalid(object, id, QStringLiteral("\"params\" must be an object or an array"));
        Message message;
        message.kind = hasId ? MessageKind::Request : MessageKind::Notification;
        message.id = id;
        message.method = method.toString();
        message.params = params;
        message.object = object;
        return message;
    }

    const bool hasResult = object.contains(QLatin1String("result"));
    const bool hasError = object.contains(QLatin1String("error"));
    if (hasResult || hasError) {
        if (hasResult == hasError)
            return invalid(
                    object, id,
                    QStringLiteral("a response has exactly one of \"result\" and \"error\""));
        if (!hasId)
            return invalid(object, id, QStringLiteral("a response needs an \"id\""));
        if (hasError && !object.value(QLatin1String("error")).isObject())
            return invalid(object, id, QStringLiteral("\"error\" must be an object"));
        Message message;
        message.kind = MessageKind::Response;
        message.id = id;
        message.object = object;
        return message;
    }
    return invalid(object, id,
                   QStringLiteral("neither a request, a notification nor a response (no "
                                  "\"method\", \"result\" or \"error\")"));
}

Payload parsePayload(const QByteArray &bytes)
{
    Payload payload;
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError) {
        payload.parseError = true;
        payload.parseErrorText = QStringLiteral("invalid JSON at offset %1: %2")
                                         .arg(error.offset)
                                         .arg(error.errorString());
        return payload;
    }
    if (document.isArray()) {
        payload.batch = true;
        const QJsonArray array = document.array();
        payload.messages.reserve(array.size());
        for (const QJsonValue &item : array)
            payload.messages.append(classify(item));
    } else {
        payload.messages.append(classify(document.object()));
    }
    return payload;
}

QString idKey(const QJsonValue &id)
{
    if (id.isString())
        return QLatin1String("s:") + id.toString();
    if (id.isDouble()) {
        // Integers keep all 64 bits: distinct ids above 2^53 must not share a key.
        constexpr qint64 notAnInteger = std::numeric_limits<qint64>::min();
        const qint64 integer = id.toInteger(notAnInteger);
        if (integer != notAnInteger)
            return QLatin1String("n:") + QString::number(integer);
        return QLatin1String("n:") + QString::number(id.toDouble(), 'g', 17);
    }
    return {};
}

QJsonObject makeResult(const QJsonValue &id, const QJsonValue &result)
{
    return QJsonObject{{QLatin1String("jsonrpc"), QLatin1String("2.0")},
                       {QLatin1String("id"), id},
                       {QLatin1String("result"), result}};
}

QJsonObject makeError(const QJsonValue &id, int code, const QString &message,
                      const QJsonValue &data)
{
    QJsonObject error{{QLatin1String("code"), code}, {QLatin1String("message"), message}};
    if (!data.isUndefined())
        error.insert(QLatin1String("data"), data);
    return QJsonObject{{QLatin1String("jsonrpc"), QLatin1String("2.0")},
                       {QLatin1String("id"), id.isUndefined() ? QJsonValue(QJsonValue::Null) : id},
                       {QLatin1String("error"), error}};
}

QJsonObject makeNotification(const QString &method, const QJsonObject &params)
{
    QJsonObject message{{QLatin1String("jsonrpc"), QLatin1String("2.0")},
                        {QLatin1String("method"), method}};
    if (!params.isEmpty())
        message.insert(QLatin1String("params"), params);
    return message;
}

QJsonObject makeRequest(const QJsonValue &id, const QString &method, const QJsonObject &params)
{
    return QJsonObject{{QLatin1String("jsonrpc"), QLatin1String("2.0")},
                       {QLatin1String("id"), id},
                       {QLatin1String("method"), method},
                       {QLatin1String("params"), params}};
}

// The same bytes as QJsonDocument::toJson(Compact), without its round trip through UTF-16.
QByteArray serialize(const QJsonObject &message)
{
    return json::serialize(message);
}

QByteArray serialize(const QJsonValue &messageOrBatch)
{
    if (messageOrBatch.isArray())
        return json::serialize(messageOrBatch);
    return serialize(messageOrBatch.toObject());
}

} // namespace cmcp::jsonrpc
