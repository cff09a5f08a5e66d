#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

// JSON-RPC 2.0 framing: parsing payloads into classified messages and building replies.
// Knows nothing of MCP methods.
namespace cmcp::jsonrpc {

enum ErrorCode {
    ParseError = -32700,
    InvalidRequest = -32600,
    MethodNotFound = -32601,
    InvalidParams = -32602,
    InternalError = -32603,
    // MCP's own code for a resource that does not exist.
    ResourceNotFound = -32002,
    // Used for requests that hit a closed session or a timed-out peer.
    RequestFailed = -32000,
    // The modern era's own (2026-07-28): HTTP headers that contradict the body, a capability
    // the request needs but its client did not declare, a version not served here.
    HeaderMismatch = -32020,
    MissingRequiredClientCapability = -32021,
    UnsupportedProtocolVersion = -32022,
    // A principal's profile allows fewer calls a second than it made; data.retryAfterMs says
    // when the next one will be taken. HTTP answers it with 429 and Retry-After.
    RateLimited = -32029,
};

enum class MessageKind { Request, Notification, Response, Invalid };

struct Message
{
    MessageKind kind = MessageKind::Invalid;
    QJsonValue id; // Request and Response; for Invalid the id when one could be read, else null
    QString method; // Request and Notification
    QJsonValue params; // undefined when absent
    QJsonObject object; // the whole message as received
    QString invalidReason; // why an Invalid message is invalid
};

Message classify(const QJsonValue &value);

struct Payload
{
    bool parseError = false;
    QString parseErrorText;
    bool batch = false; // the payload was a JSON array
    QList<Message> messages;
};

Payload parsePayload(const QByteArray &bytes);

// A stable text key for a request id, usable in hashes ("s:abc" / "n:42").
QString idKey(const QJsonValue &id);

QJsonObject makeResult(const QJsonValue &id, const QJsonValue &result);
QJsonObject makeError(const QJsonValue &id, int code, const QString &message,
                      const QJsonValue &data = QJsonValue(QJsonValue::Undefined));
QJsonObject makeNotification(const QString &method, const QJsonObject &params = {});
QJsonObject makeRequest(const QJsonValue &id, const QString &method, const QJsonObject &params);

// One line of compact JSON, as stdio and SSE framing need.
QByteArray serialize(const QJsonObject &message);
QByteArray serialize(const QJsonValue &messageOrBatch);

} // namespace cmcp::jsonrpc
