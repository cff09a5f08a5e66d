#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonValue>
#include <QList>
#include <QPair>

#include <initializer_list>

class QTcpSocket;

// Raw HTTP/1.1 responses. QHttpServerResponder in Qt 6.4 cannot stream or answer late
// safely (it keeps a raw socket pointer), so responses are written to the socket directly.
namespace cmcp::http {

using Headers = QList<QPair<QByteArray, QByteArray>>;

// A complete answer not written yet: for code that decides what to answer apart from the socket.
struct Answer
{
    int status = 0;
    QByteArray json; // compact JSON
    Headers headers; // besides Content-Type and Content-Length
};

QByteArray reasonPhrase(int status);
// Writes `parts` (at most four) of a stream in this order: straight to the kernel, in one
// sendmsg(2), while nothing waits in the socket's own buffer, and through the socket what the
// kernel does not take. QAbstractSocket copies every write into a 32 KB buffer chunk that it
// keeps for the rest of the connection once used, which is most of what an idle SSE stream would
// cost. A direct write is announced by bytesWritten before this returns (ConnectionGuard follows
// a connection's answers by it).
void writeParts(QTcpSocket *socket, std::initializer_list<QByteArrayView> parts);

// How a complete answer leaves. Answers to calls go through the socket's buffer: for calls in a
// row that is cheaper (the loop writes once it has read what else is ready, and wakes once for
// several calls). The answers a session gets once or seldom (initialize's, the 202 of a
// notification) go straight (writeParts): the connection that carried them often stays open
// for the session's GET stream, and would otherwise keep the buffer's chunk while it idles.
enum class Delivery { Buffered, Straight };

// A complete response with Content-Length; the connection stays usable unless `close`.
void writeResponse(QTcpSocket *socket, int status, const Headers &headers, const QByteArray &body,
                   bool close = false, Delivery delivery = Delivery::Buffered);
// A JSON body; `body` is compact JSON.
void writeJson(QTcpSocket *socket, int status, const QByteArray &body, const Headers &extra = {},
               Delivery delivery = Delivery::Buffered);
void writeAnswer(QTcpSocket *socket, const Answer &answer, bool close = false);
Answer jsonRpcError(int status, int code, const QString &message, const Headers &extra = {});
// A JSON-RPC error as the body of an HTTP error (400, 404, ...), as the MCP SDKs answer. It
// carries `id`, the id of the request refused, when one could be read; none otherwise.
void writeJsonRpcError(QTcpSocket *socket, int status, int code, const QString &message,
                       const Headers &extra = {}, const QJsonValue &id = QJsonValue::Undefined);

// What GuardedTcpServer's deadlines must know of the answers on a connection, kept on the socket
// itself: how many responses are complete (writeResponse and the end of a stream count one), and
// whether one is streaming now. A connection waiting for or streaming an answer has no deadline.
void setStreaming(QTcpSocket *socket, bool streaming);
bool isStreaming(const QTcpSocket *socket);
void countResponse(QTcpSocket *socket);
quint64 responsesComplete(const QTcpSocket *socket);

} // namespace cmcp::http
