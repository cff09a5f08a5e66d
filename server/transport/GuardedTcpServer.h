#pragma once

#include <QElapsedTimer>
#include <QTcpServer>

namespace cmcp {

// The listening socket handed to the HTTP server. Qt HTTP Server 6.4 buffers whole request
// bodies with no limit, so every connection is watched from here first: it follows the byte
// stream request by request (peeking, before the HTTP parser reads) and answers 413 for a
// body over the limit, 411 for a chunked body it cannot bound, and 431 for huge headers,
// then drains and closes the connection.
class GuardedTcpServer : public QTcpServer
{
    Q_OBJECT
public:
    GuardedTcpServer(qint64 maxBodyBytes, QObject *parent = nullptr);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    // Stops accepting until enough sockets have closed.
    void pauseWhileFull();

    qint64 m_maxBodyBytes;
    qint64 m_servedLimit = 0; // sockets beyond this are answered 503 and closed
    qint64 m_acceptLimit = 0; // at this many, accepting pauses: even a refusal costs a descriptor
    qint64 m_openSockets = 0;
    qint64 m_refusedSinceWarning = 0;
    QElapsedTimer m_lastRefusalWarning;
};

} // namespace cmcp
