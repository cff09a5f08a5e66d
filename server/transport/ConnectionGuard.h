#pragma once

#include "transport/HttpOptions.h"
#include "transport/HttpWire.h"
#include "transport/RequestFraming.h"
#include "transport/RequestHead.h"
#include "transport/StreamedBody.h"

#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>

class QTcpSocket;
class QThread;

namespace cmcp {

// Watches one HTTP connection's byte stream before Qt's parser reads it (GuardedTcpServer
// connects it first). It applies the size limits of RequestFraming (413, 411, 400, 431) and the
// deadlines against clients that hold a connection by sending slowly: a request's headers must
// arrive within MCP_HEADER_TIMEOUT_SECONDS, its body within MCP_BODY_TIMEOUT_SECONDS plus its
// size at MCP_BODY_MIN_RATE_KB (else 408 and close), and a keep-alive connection with nothing to
// do is closed after MCP_IDLE_TIMEOUT_SECONDS. A body that pauses for MCP_BODY_STALL_SECONDS is
// cut off as well, however fast it came before. A connection waiting for its answer (a long tool
// call) or carrying an SSE stream has no deadline: the server, not the client, is the slow one.
//
// What the HTTP parser holds for requests still arriving is counted over all connections
// (IncompleteRequestBytes): a request whose bytes would take the total past
// MCP_INCOMPLETE_REQUESTS_MAX_MB is refused (503), so that many connections that each declare a
// large body and stall cannot together pin the daemon's memory.
//
// A request that begins with StreamedRequests::prefix ("PUT /transfer/") never reaches Qt's
// parser, which would hold its whole body: its bytes are kept from the parser (read inside a
// transaction of the socket's own) until its headers are complete, and then the guard takes the
// connection over for it. The parser's reading of the socket is cut off, the route judges the
// head (`plan`, before a byte of the body is read), and a StreamedBody moves the body to disk
// under the same deadlines as any body. The connection closes after its answer. A request that
// turns out to be another one is given back to the parser whole (the transaction rolled back).
//
// A request that begins with one of StreamedRequests::takenPrefixes ("GET /ports/") is withheld
// the same way, and once its headers are complete the whole connection is handed to `take`: the
// guard steps aside (its deadlines stop, it reads nothing more), and the bytes after the head (a
// body, or a WebSocket's frames after an upgrade) stay in the socket for the route, which bounds
// the connection itself.
class ConnectionGuard : public QObject
{
public:
    // Shared by the guards of one listening socket.
    struct IncompleteRequestBytes
    {
        qint64 limit = 0;
        qint64 held = 0;
    };
    // Requests whose bodies a route reads as a stream; set up by the HTTP server.
    struct StreamedRequests
    {
        QByteArray prefix; // of the request line
        QObject *parser = nullptr; // the HTTP server, whose connection to readyRead is cut
        QThread *writerThread = nullptr;
        std::function<StreamedBodyPlan(const RequestHead &head)> plan;
        // Request-line starts of the requests whose connection a route takes whole.
        QList<QByteArray> takenPrefixes;
        std::function<void(const RequestHead &head, QTcpSocket *socket)> take;

        QList<QByteArray> allPrefixes() const;
    };

    ConnectionGuard(QTcpSocket *socket, const HttpOptions &options,
                    std::shared_ptr<IncompleteRequestBytes> incomplete,
                    std::shared_ptr<const StreamedRequests> streamed = {});
    ~ConnectionGuard() override;

    // For the StreamedBody of a request taken over: up to `most` bytes of its body that have
    // arrived (none once it is complete), and a call when more arrive.
    QByteArray readBody(qint64 most);
    void setBodyReadable(std::function<void()> readable) { m_bodyReadable = std::move(readable); }
    // The reader has stopped reading for the disk: the client is not the slow one, so no byte
    // arriving is no stall until it reads again.
    void bodyWaitsForDisk() { m_stall.stop(); }
    // Answers and closes: at once when the request's body has been read (or a deadline ran out),
    // else after a short grace in which the rest of the body is read and dropped, so that the
    // client can finish sending and read the answer.
    void answerAndClose(const http::Answer &answer, bool bodyRead);

private:
    enum class Phase { Headers, Body, Serving, Idle };

    void onReadyRead();
    // Moves to the phase the connection is in now, starting that phase's deadline on entry.
    void follow();
    void enter(Phase phase, qint64 deadlineMs);
    void onDeadline();
    bool answerPending() const;
    void refuse(int status, const QByteArray &why);
    void timeOut(const char *what, int seconds, const char *setting);
    // The headers of a streamed request are complete: the connection is the route's now.
    void takeOver();
    // The headers of a request whose connection a route takes whole are complete.
    void handOver(const RequestHead &head);
    // Brings this connection's share of the incomplete requests' bytes up to date; false when
    // the total would exceed the limit.
    bool accountHeldBytes();

    QTcpSocket *m_socket;
    RequestFraming m_framing;
    const int m_headerMs;
    const int m_bodyMs;
    const qint64 m_bodyMinBytesPerSecond;
    const int m_idleMs;
    const int m_stallMs;
    const std::shared_ptr<IncompleteRequestBytes> m_incomplete;
    qint64 m_held = 0; // this connection's part of m_incomplete->held
    Phase m_phase = Phase::Headers;
    QTimer m_deadline;
    QTimer m_stall; // runs while a body is arriving, restarted by each of its bytes
    bool m_closing = false;
    const std::shared_ptr<const StreamedRequests> m_streamed;
    // A request that may be a streamed one is arriving: the bytes read so far are kept from the
    // HTTP parser in a transaction begun when it had completed m_withheldAfter requests.
    bool m_withholding = false;
    quint64 m_withheldAfter = 0;
    bool m_takenOver = false;
    std::function<void()> m_bodyReadable;
};

} // namespace cmcp
