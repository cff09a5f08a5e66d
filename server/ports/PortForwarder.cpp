#include "ports/PortForwarder.h"

#include "ports/NamespaceConnect.h"
#include "ports/ProxiedHeads.h"
#include "transport/HttpWire.h"

#include <QTcpSocket>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

constexpr qint64 kMaxResponseHeadBytes = 64 * 1024;
// Reading from one side stops while this much waits unsent to the other.
constexpr qint64 kMaxUnsentBytes = 1024 * 1024;
constexpr qint64 kReadChunkBytes = 64 * 1024;

} // namespace

PortForwarder::PortForwarder(QTcpSocket *client, RequestHead head, QByteArray target,
                             std::shared_ptr<PublishedPorts::Port> port, PublishedPorts &ports)
    : QObject(client),
      m_client(client),
      m_head(std::move(head)),
      m_target(std::move(target)),
      m_publicPrefix((PublishedPorts::urlPrefix() + port->token + QLatin1Char('/')).toLatin1()),
      m_port(std::move(port)),
      m_maxBytes(ports.limits().maxBytesPerConnection),
      m_idleMs(ports.limits().idleSeconds * 1000),
      m_upgradeAsked(proxy::wantsWebSocket(m_head))
{
    ++m_port->openConnections;
    ++m_port->connections;
    m_bodyLeft = m_upgradeAsked ? 0 : qMax<qint64>(0, m_head.contentLength());
    m_idle.setSingleShot(true);
    connect(&m_idle, &QTimer::timeout, this, [this] {
        spdlog::info("ports: closing a connection to job {} port {}: no byte either way for {} s "
                     "(PORTS_IDLE_SECONDS)",
                     m_port->jobId.toStdString(), m_port->port, m_idleMs / 1000);
        if (!m_responseStarted)
            return fail(504,
                        QStringLiteral("the job's server did not answer within "
                                       "PORTS_IDLE_SECONDS"));
        closeBoth();
    });
    connect(&ports, &PublishedPorts::ended, this, [this](const QString &token) {
        if (token == m_port->token)
            closeBoth();
    });
    connect(client, &QTcpSocket::disconnected, this, [this] {
        if (m_upstream)
            m_upstream->abort();
        deleteLater();
    });
    client->setReadBufferSize(kMaxUnsentBytes);
}

PortForwarder::~PortForwarder()
{
    --m_port->openConnections;
}

void PortForwarder::start()
{
    m_idle.start(m_idleMs);
    // A client that waits for "100 Continue" before its body gets it from here: the server is
    // not asked (Expect is not forwarded).
    if (m_bodyLeft > 0 && m_head.value("expect").compare("100-continue", Qt::CaseInsensitive) == 0)
        m_client->write("HTTP/1.1 100 Continue\r\n\r\n");
    connectInNamespace(
            m_port->netns.get(), m_port->port, this,
            [this](UniqueFd socket, const QString &error) { connected(std::move(socket), error); });
}

void PortForwarder::connected(UniqueFd socket, const QString &error)
{
    if (!m_client || m_closing)
        return;
    if (!socket.isValid())
        return fail(502, error);
    m_upstream = new QTcpSocket(this);
    if (!m_upstream->setSocketDescriptor(socket.get())) {
        return fail(502,
                    QStringLiteral("cannot use the connection to the job: %1")
                            .arg(m_upstream->errorString()));
    }
    (void)socket.release(); // the QTcpSocket's now
    m_upstream->setReadBufferSize(kMaxUnsentBytes);
    connect(m_upstream, &QTcpSocket::readyRead, this, &PortForwarder::relayUpstream);
    connect(m_upstream, &QTcpSocket::bytesWritten, this, &PortForwarder::relayClient);
    connect(m_client, &QTcpSocket::readyRead, this, &PortForwarder::relayClient);
    connect(m_client, &QTcpSocket::bytesWritten, this, &PortForwarder::relayUpstream);
    connect(m_upstream, &QTcpSocket::disconnected, this, [this] {
        m_upstreamEnded = true;
        relayUpstream();
        if (!m_responseStarted)
            return fail(502,
                        QStringLiteral("the job's server closed the connection without "
                                       "answering"));
        finishWhenDrained();
    });
    const QByteArray head = proxy::upstreamRequest(m_head, m_target, m_port->port, m_publicPrefix,
                                                   m_upgradeAsked, m_bodyLeft);
    m_upstream->write(head);
    relayClient();
}

bool PortForwarder::withinByteBound(qint64 more)
{
    m_bytes += more;
    if (m_bytes <= m_maxBytes)
        return true;
    spdlog::info("ports: cutting a connection to job {} port {}: more than {} MiB moved "
                 "(PORTS_MAX_MB)",
                 m_port->jobId.toStdString(), m_port->port, m_maxBytes >> 20);
    closeBoth();
    return false;
}

// Client to server: the request's body, or after an upgrade everything.
void PortForwarder::relayClient()
{
    if (!m_client || !m_upstream || m_closing)
        return;
    while (m_upstream->bytesToWrite() < kMaxUnsentBytes && m_client->bytesAvailable() > 0) {
        qint64 most = kReadChunkBytes;
        if (!m_upgraded) {
            if (m_bodyLeft <= 0)
                break; // anything after the body waits for nothing: the connection closes
            most = qMin(most, m_bodyLeft);
        }
        const QByteArray bytes = m_client->read(most);
        if (bytes.isEmpty())
            break;
        if (!m_upgraded)
            m_bodyLeft -= bytes.size();
        m_port->bytesIn += bytes.size();
        m_idle.start(m_idleMs);
        if (!withinByteBound(bytes.size()))
            return;
        m_upstream->write(bytes);
    }
}

bool PortForwarder::parseResponseHead()
{
    const qsizetype end = m_responseHead.indexOf("\r\n\r\n");
    // Over the bound whether or not its end has arrived in the same read.
    if ((end < 0 ? m_responseHead.size() : end + 4) > kMaxResponseHeadBytes) {
        fail(502, QStringLiteral("the job's server sent a response head over 64 KiB"));
        return false;
    }
    if (end < 0) {
        if (m_upstreamEnded) {
            fail(502, QStringLiteral("the job's server closed the connection mid-answer"));
            return false;
        }
        return true; // more to come
    }
    const QByteArray rest = m_responseHead.mid(end + 4);
    QString error;
    const std::optional<proxy::ResponseHead> response = proxy::downstreamResponse(
            m_responseHead.left(end + 4), m_publicPrefix, m_port->port, m_upgradeAsked, &error);
    if (!response) {
        fail(502, error);
        return false;
    }
    m_responseStarted = true;
    m_responseHead.clear();
    m_upgraded = response->status == 101;
    m_client->write(response->block);
    m_port->bytesOut += response->block.size();
    m_client->write(rest);
    m_port->bytesOut += rest.size();
    if (m_upgraded)
        relayClient(); // frames the client sent right after its upgrade request
    return withinByteBound(response->block.size() + rest.size());
}

// Server to client: the answer's head, rewritten, then its bytes as they come.
void PortForwarder::relayUpstream()
{
    if (!m_client || !m_upstream || m_closing)
        return;
    while (m_client->bytesToWrite() < kMaxUnsentBytes && m_upstream->bytesAvailable() > 0) {
        const QByteArray bytes = m_upstream->read(kReadChunkBytes);
        if (bytes.isEmpty())
            break;
        m_idle.start(m_idleMs);
        if (!m_responseStarted) {
            m_responseHead += bytes;
            if (!parseResponseHead())
                return;
            continue;
        }
        m_port->bytesOut += bytes.size();
        if (!withinByteBound(bytes.size()))
            return;
        m_client->write(bytes);
    }
    if (m_upstreamEnded && !m_responseStarted && !m_responseHead.isEmpty())
        parseResponseHead();
    if (m_upstreamEnded && m_responseStarted)
        finishWhenDrained();
}

void PortForwarder::finishWhenDrained()
{
    if (!m_client || m_closing || (m_upstream && m_upstream->bytesAvailable() > 0))
        return;
    m_closing = true;
    m_idle.stop();
    m_client->disconnectFromHost(); // after what waits unsent
}

void PortForwarder::fail(int status, const QString &why)
{
    if (!m_client || m_closing)
        return;
    spdlog::info("ports: {} for job {} port {}: {}", status, m_port->jobId.toStdString(),
                 m_port->port, why.toStdString());
    m_closing = true;
    m_idle.stop();
    if (m_upstream)
        m_upstream->abort();
    http::writeJsonRpcError(m_client, status, -32000, why, {{"Connection", "close"}});
    m_client->disconnectFromHost();
}

void PortForwarder::closeBoth()
{
    if (m_closing)
        return;
    m_closing = true;
    m_idle.stop();
    if (m_upstream)
        m_upstream->abort();
    if (m_client)
        m_client->abort();
}

} // namespace cmcp
