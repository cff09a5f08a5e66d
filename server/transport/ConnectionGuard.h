#pragma once

#include "transport/HttpOptions.h"
#include "transport/RequestFraming.h"

#include <QObject>
#include <QTimer>

class QTcpSocket;

namespace cmcp {

// Watches one HTTP connection's byte stream before Qt's parser reads it (GuardedTcpServer
// connects it first). It applies the size limits of RequestFraming (413, 411, 400, 431) and the
// deadlines against clients that hold a connection by sending slowly: a request's headers must
// arrive within MCP_HEADER_TIMEOUT_SECONDS, its body within MCP_BODY_TIMEOUT_SECONDS plus its
// size at MCP_BODY_MIN_RATE_KB (else 408 and close), and a keep-alive connection with nothing to
// do is closed after MCP_IDLE_TIMEOUT_SECONDS. A connection waiting for its answer (a long tool
// call) or carrying an SSE stream has no deadline: the server, not the client, is the slow one.
class ConnectionGuard : public QObject
{
public:
    ConnectionGuard(QTcpSocket *socket, const HttpOptions &options);

private:
    enum class Phase { Headers, Body, Serving, Idle };

    void onReadyRead();
    // Moves to the phase the connection is in now, starting that phase's deadline on entry.
    void follow();
    void enter(Phase phase, qint64 deadlineMs);
    void onDeadline();
    bool answerPending() const;
    void refuse(int status, const QByteArray &why);
    void timeOut(const char *what, int seconds);

    QTcpSocket *m_socket;
    RequestFraming m_framing;
    const int m_headerMs;
    const int m_bodyMs;
    const qint64 m_bodyMinBytesPerSecond;
    const int m_idleMs;
    Phase m_phase = Phase::Headers;
    QTimer m_deadline;
    bool m_closing = false;
};

} // namespace cmcp
