#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

class QTcpSocket;

// Raw HTTP/1.1 responses. QHttpServerResponder in Qt 6.4 cannot stream or answer late
// safely (it keeps a raw socket pointer), so responses are written to the socket directly.
namespace cmcp::http {

using Headers = QList<QPair<QByteArray, QByteArray>>;

QByteArray reasonPhrase(int status);
// A complete response with Content-Length; the connection stays usable unless `close`.
void writeResponse(QTcpSocket *socket, int status, const Headers &headers, const QByteArray &body,
                   bool close = false);
// A JSON body; `body` is compact JSON.
void writeJson(QTcpSocket *socket, int status, const QByteArray &body, const Headers &extra = {});
// A JSON-RPC error as the body of an HTTP error (400, 404, ...), as the MCP SDKs answer.
void writeJsonRpcError(QTcpSocket *socket, int status, int code, const QString &message,
                       const Headers &extra = {});

} // namespace cmcp::http
