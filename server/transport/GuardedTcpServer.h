#pragma once

#include "transport/ConnectionGuard.h"
#include "transport/HttpOptions.h"

#include <QHash>
#include <QHostAddress>

#include <QElapsedTimer>
#include <QTcpServer>

namespace cmcp {

// The listening socket handed to the HTTP server. Qt HTTP Server 6.4 buffers whole request
// bodies with no limit and times nothing out, so every connection is watched from here first by
// a ConnectionGuard (size limits and slow-client deadlines), the number of open sockets is
// kept below the descriptor limit, and one peer address holds at most
// MCP_MAX_CONNECTIONS_PER_PEER of them.
class GuardedTcpServer : public QTcpServer
{
    Q_OBJECT
public:
    GuardedTcpServer(const HttpOptions &options,
                     std::shared_ptr<const ConnectionGuard::StreamedRequests> streamed,
                     QObject *parent = nullptr);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    // Stops accepting until enough sockets have closed.
    void pauseWhileFull();

    const HttpOptions m_options;
    qint64 m_servedLimit = 0; // sockets beyond this are answered 503 and closed
    qint64 m_acceptLimit = 0; // at this many, accepting pauses: even a refusal costs a descriptor
    qint64 m_openSockets = 0;
    QHash<QHostAddress, int> m_openPerPeer;
    const std::shared_ptr<ConnectionGuard::IncompleteRequestBytes> m_incomplete;
    const std::shared_ptr<const ConnectionGuard::StreamedRequests> m_streamed;
    qint64 m_refusedSinceWarning = 0;
    QElapsedTimer m_lastRefusalWarning;
};

} // namespace cmcp
