#include "transport/HttpWire.h"

#include "mcp/JsonRpc.h"

#include <QTcpSocket>

#include <array>
#include <sys/socket.h>
#include <sys/uio.h>

namespace cmcp::http {

namespace {
constexpr char streamingProperty[] = "cmcp_http_streaming";
constexpr char responsesProperty[] = "cmcp_http_responses";
} // namespace

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 206:
        return "Partial Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 416:
        return "Range Not Satisfiable";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    case 507:
        return "Insufficient Storage";
    default:
        return "Status";
    }
}

void writeParts(QTcpSocket *socket, std::initializer_list<QByteArrayView> parts)
{
    Q_ASSERT(parts.size() <= 4);
    qint64 sent = 0;
    if (socket->bytesToWrite() == 0 && socket->state() == QAbstractSocket::ConnectedState) {
        std::array<iovec, 4> vectors{};
        msghdr message{};
        message.msg_iov = vectors.data();
        for (const QByteArrayView part : parts)
            if (!part.isEmpty())
                vectors[message.msg_iovlen++] = {const_cast<char *>(part.data()),
                                                 size_t(part.size())};
        // Whatever fails here (a full socket buffer, a peer gone) is left to the socket's own
        // write below, which buffers or reports it as it always did.
        const ssize_t written =
                ::sendmsg(int(socket->socketDescriptor()), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (written > 0)
            sent = written;
    }
    qint64 skip = sent;
    for (const QByteArrayView part : parts) {
        if (skip >= part.size()) {
            skip -= part.size();
            continue;
        }
        socket->write(part.data() + skip, part.size() - skip);
        skip = 0;
    }
    if (sent > 0)
        Q_EMIT socket->bytesWritten(sent);
}

void writeResponse(QTcpSocket *socket, int status, const Headers &headers, const QByteArray &body,
                   bool close, Delivery delivery)
{
    if (!socket || socket->state() != QAbstractSocket::ConnectedState)
        return;
    QByteArray out;
    out.reserve(256);
    out += "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    for (const auto &[name, value] : headers)
        out += name + ": " + value + "\r\n";
    out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    if (close)
        out += "Connection: close\r\n";
    out += "\r\n";
    // Counted first: a straight write announces its bytes at once, and ConnectionGuard must then
    // see this answer given, or it would wait for it with no deadline.
    countResponse(socket);
    if (delivery == Delivery::Straight) {
        writeParts(socket, {out, body});
    } else {
        socket->write(out);
        socket->write(body);
    }
    if (close)
        socket->disconnectFromHost();
}

void writeJson(QTcpSocket *socket, int status, const QByteArray &body, const Headers &extra,
               Delivery delivery)
{
    Headers headers{{"Content-Type", "application/json"}};
    headers.append(extra);
    writeResponse(socket, status, headers, body, false, delivery);
}

void writeAnswer(QTcpSocket *socket, const Answer &answer, bool close)
{
    Headers headers{{"Content-Type", "application/json"}};
    headers.append(answer.headers);
    writeResponse(socket, answer.status, headers, answer.json, close);
}

Answer jsonRpcError(int status, int code, const QString &message, const Headers &extra)
{
    QJsonObject error = jsonrpc::makeError(QJsonValue::Undefined, code, message);
    error.remove(QLatin1String("id"));
    return {status, jsonrpc::serialize(error), extra};
}

void writeJsonRpcError(QTcpSocket *socket, int status, int code, const QString &message,
                       const Headers &extra, const QJsonValue &id)
{
    QJsonObject error = jsonrpc::makeError(id, code, message);
    if (id.isUndefined())
        error.remove(QLatin1String("id"));
    writeJson(socket, status, jsonrpc::serialize(error), extra);
}

void setStreaming(QTcpSocket *socket, bool streaming)
{
    if (socket)
        socket->setProperty(streamingProperty, streaming);
}

bool isStreaming(const QTcpSocket *socket)
{
    return socket->property(streamingProperty).toBool();
}

void countResponse(QTcpSocket *socket)
{
    if (socket)
        socket->setProperty(responsesProperty, responsesComplete(socket) + 1);
}

quint64 responsesComplete(const QTcpSocket *socket)
{
    return socket->property(responsesProperty).toULongLong();
}

} // namespace cmcp::http
