#pragma once

#include "transport/HttpOptions.h"
#include "transport/RequestFraming.h"

#include <QObject>
#include <QTimer>

#include <memory>

class QTcpSocket;

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
class ConnectionGuard : public QObject
{
public:
    // Shared by the guards of one listening socket.
    struct IncompleteRequestBytes
    {
        qint64 limit = 0;
        qint64 held = 0;
    };

    ConnectionGuard(QTcpSocket *socket, const HttpOptions &options,
                    std::shared_ptr<IncompleteRequestBytes> incomplete);
    ~ConnectionGuard() override;

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
};

} // namespace cmcp
