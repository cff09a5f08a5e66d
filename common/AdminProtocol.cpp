#include "common/AdminProtocol.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace cmcp::admin {

namespace {

QString typeName(MessageType type)
{
    switch (type) {
    case MessageType::Hello:
        return QStringLiteral("hello");
    case MessageType::Event:
        return QStringLiteral("event");
    case MessageType::Request:
        return QStringLiteral("request");
    case MessageType::Reply:
        return QStringLiteral("reply");
    case MessageType::Error:
        return QStringLiteral("error");
    }
    return {};
}

std::optional<MessageType> typeFromName(const QString &name)
{
    for (MessageType type : {MessageType::Hello, MessageType::Event, MessageType::Request,
                             MessageType::Reply, MessageType::Error}) {
        if (typeName(type) == name)
            return type;
    }
    return std::nullopt;
}

// JSON numbers are doubles: an id must be an integer a double holds exactly.
std::optional<qint64> integerId(const QJsonValue &value)
{
    if (!value.isDouble())
        return std::nullopt;
    const double number = value.toDouble();
    constexpr double exactLimit = 9007199254740992.0; // 2^53
    if (number != double(qint64(number)) || number < 0 || number > exactLimit)
        return std::nullopt;
    return qint64(number);
}

} // namespace

Message Message::hello(const QString &program, const QString &programVersion)
{
    Message m;
    m.type = MessageType::Hello;
    m.version = protocolVersion;
    m.program = program;
    m.programVersion = programVersion;
    return m;
}

Message Message::event(const QString &name, const QJsonObject &data)
{
    Message m;
    m.type = MessageType::Event;
    m.name = name;
    m.body = data;
    return m;
}

Message Message::request(qint64 id, const QString &method, const QJsonObject &params)
{
    Message m;
    m.type = MessageType::Request;
    m.id = id;
    m.name = method;
    m.body = params;
    return m;
}

Message Message::reply(qint64 id, const QJsonObject &result)
{
    Message m;
    m.type = MessageType::Reply;
    m.id = id;
    m.body = result;
    return m;
}

Message Message::error(std::optional<qint64> id, const QString &code, const QString &message)
{
    Message m;
    m.type = MessageType::Error;
    m.id = id;
    m.errorCode = code;
    m.errorMessage = message;
    return m;
}

QByteArray encode(const Message &message)
{
    QJsonObject object{{QLatin1String("type"), typeName(message.type)}};
    switch (message.type) {
    case MessageType::Hello:
        object.insert(QLatin1String("version"), message.version);
        object.insert(QLatin1String("program"), message.program);
        object.insert(QLatin1String("programVersion"), message.programVersion);
        break;
    case MessageType::Event:
        object.insert(QLatin1String("event"), message.name);
        object.insert(QLatin1String("data"), message.body);
        break;
    case MessageType::Request:
        object.insert(QLatin1String("id"), double(message.id.value_or(0)));
        object.insert(QLatin1String("method"), message.name);
        object.insert(QLatin1String("params"), message.body);
        break;
    case MessageType::Reply:
        object.insert(QLatin1String("id"), double(message.id.value_or(0)));
        object.insert(QLatin1String("result"), message.body);
        break;
    case MessageType::Error:
        if (message.id)
            object.insert(QLatin1String("id"), double(*message.id));
        object.insert(QLatin1String("code"), message.errorCode);
        object.insert(QLatin1String("message"), message.errorMessage);
        break;
    }
    return QJsonDocument(object).toJson(QJsonDocument::Compact) + '\n';
}

std::optional<Message> decode(const QByteArray &line, QString *error, std::optional<qint64> *id)
{
    const auto fail = [error](const QString &problem) {
        if (error)
            *error = problem;
        return std::nullopt;
    };
    if (line.size() > maxLineBytes)
        return fail(QStringLiteral("the line is longer than %1 bytes").arg(maxLineBytes));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(line, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(QStringLiteral("not JSON: %1 at byte %2")
                            .arg(parseError.errorString())
                            .arg(parseError.offset));
    if (!document.isObject())
        return fail(QStringLiteral("a message must be a JSON object"));
    const QJsonObject object = document.object();
    Message m;
    if (object.contains(QLatin1String("id"))) {
        m.id = integerId(object.value(QLatin1String("id")));
        if (!m.id)
            return fail(QStringLiteral("\"id\" must be a non-negative integer"));
        if (id)
            *id = m.id;
    }
    const auto type = typeFromName(object.value(QLatin1String("type")).toString());
    if (!type)
        return fail(QStringLiteral("\"type\" must be one of hello, event, request, reply, error"));
    m.type = *type;
    const auto requireString = [&object](const char *key, QString *out) {
        const QJsonValue value = object.value(QLatin1String(key));
        if (!value.isString() || value.toString().isEmpty())
            return false;
        *out = value.toString();
        return true;
    };
    const auto optionalObject = [&object](const char *key, QJsonObject *out) {
        const QJsonValue value = object.value(QLatin1String(key));
        if (value.isUndefined())
            return true;
        if (!value.isObject())
            return false;
        *out = value.toObject();
        return true;
    };
    switch (m.type) {
    case MessageType::Hello: {
        const QJsonValue version = object.value(QLatin1String("version"));
        if (!integerId(version) || version.toDouble() > 1000000)
            return fail(QStringLiteral("a hello needs an integer \"version\""));
        m.version = int(version.toDouble());
        m.program = object.value(QLatin1String("program")).toString();
        m.programVersion = object.value(QLatin1String("programVersion")).toString();
        break;
    }
    case MessageType::Event:
        if (!requireString("event", &m.name))
            return fail(QStringLiteral("an event needs a string \"event\""));
        if (!optionalObject("data", &m.body))
            return fail(QStringLiteral("an event's \"data\" must be an object"));
        break;
    case MessageType::Request:
        if (!m.id)
            return fail(QStringLiteral("a request needs an \"id\""));
        if (!requireString("method", &m.name))
            return fail(QStringLiteral("a request needs a string \"method\""));
        if (!optionalObject("params", &m.body))
            return fail(QStringLiteral("a request's \"params\" must be an object"));
        break;
    case MessageType::Reply:
        if (!m.id)
            return fail(QStringLiteral("a reply needs an \"id\""));
        if (!optionalObject("result", &m.body))
            return fail(QStringLiteral("a reply's \"result\" must be an object"));
        break;
    case MessageType::Error:
        if (!requireString("code", &m.errorCode))
            return fail(QStringLiteral("an error needs a string \"code\""));
        m.errorMessage = object.value(QLatin1String("message")).toString();
        break;
    }
    return m;
}

QString checkHello(const Message &hello)
{
    if (hello.type != MessageType::Hello)
        return QStringLiteral("the first message must be a hello");
    if (hello.version != protocolVersion)
        return QStringLiteral("protocol version %1 is not supported (this side speaks version %2)")
                .arg(hello.version)
                .arg(protocolVersion);
    return {};
}

QList<LineSplitter::Line> LineSplitter::feed(const QByteArray &data)
{
    QList<Line> lines;
    qsizetype start = 0;
    while (start < data.size()) {
        const qsizetype newline = data.indexOf('\n', start);
        const qsizetype end = newline < 0 ? data.size() : newline;
        if (!m_discarding) {
            m_partial.append(data.constData() + start, end - start);
            if (m_partial.size() > m_maxBytes) {
                m_partial.clear();
                m_discarding = true;
            }
        }
        if (newline < 0)
            break;
        if (m_discarding)
            lines.append({{}, true});
        else if (!m_partial.trimmed().isEmpty())
            lines.append({m_partial, false});
        m_partial.clear();
        m_discarding = false;
        start = newline + 1;
    }
    return lines;
}

} // namespace cmcp::admin
