#include "transport/GuardedTcpServer.h"

#include "transport/ConnectionGuard.h"
#include "transport/HttpWire.h"

#include <QTcpSocket>
#include <QTimer>

#include <sys/resource.h>

#include <spdlog/spdlog.h>

namespace cmcp {

GuardedTcpServer::GuardedTcpServer(
        const HttpOptions &options,
        std::shared_ptr<const ConnectionGuard::StreamedRequests> streamed, QObject *parent)
    : QTcpServer(parent),
      m_options(options),
      m_incomplete(std::make_shared<ConnectionGuard::IncompleteRequestBytes>()),
      m_streamed(std::move(streamed))
{
    m_incomplete->limit = options.incompleteRequestsMaxBytes;
    // Qt 6.4 treats EMFILE from accept() as a temporary error and retries at once: out of
    // descriptors the event loop would spin at full CPU. So sockets are counted and kept
    // below the descriptor limit, leaving room for files and child processes.
    rlimit limit{};
    const qint64 descriptors =
            getrlimit(RLIMIT_NOFILE, &limit) == 0 ? qint64(limit.rlim_cur) : 1024;
    m_servedLimit = qMax<qint64>(8, descriptors - 128);
    m_acceptLimit = qMax<qint64>(16, descriptors - 32);
    // Qt listens with a backlog of 50. Clients reconnecting together (a restart behind a load
    // balancer, a burst of SSE readers) overflow that while the loop is busy, and what the kernel
    // does then depends on its settings: retransmitted SYNs at best, resets at worst. The
    // kernel caps this request at net.core.somaxconn.
    setListenBacklogSize(4096);
}

void GuardedTcpServer::incomingConnection(qintptr descriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    ++m_openSockets;
    const QHostAddress peer = socket->peerAddress();
    const int fromPeer = ++m_openPerPeer[peer];
    connect(socket, &QObject::destroyed, this, [this, peer] {
        --m_openSockets;
        if (--m_openPerPeer[peer] <= 0)
            m_openPerPeer.remove(peer);
    });
    if (m_openSockets >= m_acceptLimit)
        pauseWhileFull();
    if (m_openSockets > m_servedLimit) {
        // Answer and close rather than leave the client hanging.
        ++m_refusedSinceWarning;
        if (!m_lastRefusalWarning.isValid() || m_lastRefusalWarning.hasExpired(10000)) {
            spdlog::warn("refused {} connection(s): {} sockets are open, the most the descriptor "
                         "limit allows",
                         m_refusedSinceWarning, m_openSockets - 1);
            m_refusedSinceWarning = 0;
            m_lastRefusalWarning.start();
        }
        http::writeJsonRpcError(socket, 503, -32000,
                                QStringLiteral("too many open connections: try again later"),
                                {{"Connection", "close"}, {"Retry-After", "1"}});
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        socket->disconnectFromHost();
        return;
    }
    if (fromPeer > m_options.maxConnectionsPerPeer) {
        // One client cannot take the sockets (and the memory behind them) every client shares.
        spdlog::warn("refused a connection from {}: {} are open from there, the most allowed "
                     "(MCP_MAX_CONNECTIONS_PER_PEER)",
                     peer.toString().toStdString(), fromPeer - 1);
        http::writeJsonRpcError(socket, 503, -32000,
                                QStringLiteral("too many open connections from %1, the most "
                                               "allowed (MCP_MAX_CONNECTIONS_PER_PEER=%2)")
                                        .arg(peer.toString())
                                        .arg(m_options.maxConnectionsPerPeer),
                                {{"Connection", "close"}, {"Retry-After", "1"}});
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        socket->disconnectFromHost();
        return;
    }
    // Connected before the HTTP server connects its own slot, so the guard sees bytes first.
    new ConnectionGuard(socket, m_options, m_incomplete, m_streamed);
    addPendingConnection(socket);
}

void GuardedTcpServer::pauseWhileFull()
{
    pauseAccepting();
    QTimer::singleShot(200, this, [this] {
        if (m_openSockets >= m_acceptLimit)
            pauseWhileFull();
        else
            resumeAccepting();
    });
}

} // namespace cmcp
