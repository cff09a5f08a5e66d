#include "egress/EgressProxy.h"

#include "egress/GateAuthority.h"
#include "egress/LoopbackPeer.h"
#include "egress/SecretTunnel.h"
#include "egress/tls/TlsClientHello.h"

#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <spdlog/spdlog.h>

#include <chrono>

namespace cmcp {

namespace {

constexpr qsizetype maxHeadBytes = 64 * 1024;
// Bytes waiting to be written to one side before the other side is no longer read.
constexpr qint64 maxPendingBytes = 1024 * 1024;

} // namespace

QByteArray EgressProxy::statusResponse(int status, const QByteArray &reason, const QString &body)
{
    const QByteArray html = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>"
            + QByteArray(EgressProxy::pageTitle) + "</title></head><body><pre>"
            + body.toHtmlEscaped().toUtf8() + "</pre></body></html>\n";
    return "HTTP/1.1 " + QByteArray::number(status) + ' ' + reason
            + "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "
            + QByteArray::number(html.size()) + "\r\nConnection: close\r\n\r\n" + html;
}

namespace {

// Headers that belong to the hop between client and proxy, not to the server.
bool isHopHeader(const QByteArray &name)
{
    const QByteArray lower = name.trimmed().toLower();
    return lower == "proxy-connection" || lower == "proxy-authorization" || lower == "connection"
            || lower == "keep-alive" || lower == "host" || lower == "upgrade" || lower == "te"
            || lower == "trailer";
}

} // namespace

// One client connection: reads the request head, asks the gate, connects to the checked
// address, then relays bytes both ways until either side closes.
class ProxyConnection : public QObject
{
public:
    ProxyConnection(EgressProxy *proxy, QTcpSocket *client)
        : QObject(proxy),
          m_proxy(proxy),
          m_client(client)
    {
        m_proxy->m_open.insert(this);
        m_client->setParent(this);
        m_client->setReadBufferSize(256 * 1024);
        connect(m_client, &QTcpSocket::readyRead, this, &ProxyConnection::onClientData);
        connect(m_client, &QTcpSocket::bytesWritten, this, &ProxyConnection::onUpstreamData);
        connect(m_client, &QTcpSocket::disconnected, this, &ProxyConnection::onClientGone);
        m_timer.setSingleShot(true);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            if (m_state == State::Connecting)
                connectNext(QStringLiteral("no connection within %1 ms")
                                    .arg(m_proxy->m_options.connectTimeoutMs));
            else if (m_state == State::Inspecting)
                refuseTunnel("tls_client_hello",
                             QStringLiteral("its ClientHello was not whole within %1 ms")
                                     .arg(m_proxy->m_options.connectTimeoutMs));
            else
                close();
        });
        // A client that never sends a whole head is not kept.
        m_timer.start(m_proxy->m_options.connectTimeoutMs);
        m_idleTimer.setSingleShot(true);
        connect(&m_idleTimer, &QTimer::timeout, this, &ProxyConnection::checkIdle);
    }

    ~ProxyConnection() override { m_proxy->m_open.remove(this); }

private:
    // Inspecting: a tunnel is open, and the client's first bytes are held until they show
    // whether they are a ClientHello and which name it carries; the server's bytes flow.
    // Intercepting: a tunnel opened by a SecretTunnel, every byte both ways going through it.
    enum class State {
        ReadingHead,
        Deciding,
        Connecting,
        Inspecting,
        Relaying,
        Intercepting,
        Closing
    };

    void onClientData()
    {
        if (m_state == State::Intercepting) {
            interceptFromClient();
            return;
        }
        if (m_state == State::Relaying) {
            pump(m_client, m_upstream);
            return;
        }
        if (m_state == State::Inspecting) {
            inspectHello();
            return;
        }
        if (m_state != State::ReadingHead)
            return; // kept in the socket until the upstream connection is there
        m_head.append(m_client->readAll());
        const qsizetype end = m_head.indexOf("\r\n\r\n");
        if (end < 0) {
            if (m_head.size() > maxHeadBytes)
                answerAndClose(431, "Request Header Fields Too Large",
                               QStringLiteral("request head too large"));
            return;
        }
        m_early = m_head.mid(end + 4);
        m_head.truncate(end + 2); // keep the last header line's CRLF
        readHead();
    }

    void readHead()
    {
        const qsizetype lineEnd = m_head.indexOf("\r\n");
        const QList<QByteArray> requestLine = m_head.left(lineEnd).split(' ');
        if (requestLine.size() != 3 || !requestLine.at(2).startsWith("HTTP/1.")) {
            answerAndClose(400, "Bad Request", QStringLiteral("not an HTTP/1.x proxy request"));
            return;
        }
        m_method = requestLine.at(0);
        const QByteArray target = requestLine.at(1);
        m_version = requestLine.at(2);
        QUrl url;
        if (m_method == "CONNECT") {
            m_tunnel = true;
            // host:port, or [v6]:port; decided like an https URL to that authority.
            url = QUrl(QStringLiteral("https://%1/").arg(QString::fromLatin1(target)));
            m_targetText = QString::fromLatin1(target);
        } else {
            url = QUrl::fromEncoded(target, QUrl::StrictMode);
            m_targetText = url.toString();
            if (url.scheme() != QLatin1String("http")) {
                answerAndClose(400, "Bad Request",
                               QStringLiteral("only absolute http URLs and CONNECT are proxied"));
                return;
            }
        }
        m_url = url;
        m_headerLines = m_head.mid(lineEnd + 2).split('\n');
        m_state = State::Deciding;
        m_proxy->m_gate->decide(url, this, [this](const EgressDecision &decision) {
            if (!decision.allowed()) {
                spdlog::debug("egress proxy: refused {}: {}", m_targetText.toStdString(),
                              decision.refusal.toStdString());
                Q_EMIT m_proxy->refused(m_targetText, decision.refusal);
                answerAndClose(403, "Forbidden", decision.refusal);
                return;
            }
            m_decision = decision;
            m_addressIndex = -1;
            m_state = State::Connecting;
            connectNext({});
        });
    }

    void connectNext(const QString &lastError)
    {
        if (m_upstream) {
            m_upstream->disconnect(this);
            m_upstream->abort();
            m_upstream->deleteLater();
            m_upstream = nullptr;
        }
        if (++m_addressIndex >= m_decision.addresses.size()) {
            answerAndClose(502, "Bad Gateway",
                           QStringLiteral("cannot connect to %1: %2")
                                   .arg(m_decision.target.authority(), lastError));
            return;
        }
        m_upstream = new QTcpSocket(this);
        m_upstream->setReadBufferSize(256 * 1024);
        connect(m_upstream, &QTcpSocket::connected, this, &ProxyConnection::onConnected);
        connect(m_upstream, &QTcpSocket::errorOccurred, this, [this] {
            if (m_state == State::Connecting)
                connectNext(m_upstream->errorString());
        });
        m_timer.start(m_proxy->m_options.connectTimeoutMs);
        // The checked address itself: no name is resolved again.
        m_upstream->connectToHost(m_decision.addresses.at(m_addressIndex), m_decision.target.port);
    }

    void onConnected()
    {
        m_timer.stop();
        touch();
        if (m_proxy->m_options.idleTimeoutMs > 0)
            m_idleTimer.start(m_proxy->m_options.idleTimeoutMs);
        connect(m_upstream, &QTcpSocket::readyRead, this, &ProxyConnection::onUpstreamData);
        connect(m_upstream, &QTcpSocket::bytesWritten, this, &ProxyConnection::onClientData);
        connect(m_upstream, &QTcpSocket::disconnected, this, &ProxyConnection::onUpstreamGone);
        if (m_tunnel) {
            m_client->write(m_version + " 200 Connection Established\r\n\r\n");
            m_state = State::Inspecting;
            m_hello = std::exchange(m_early, {});
            inspectHello();
            return;
        }
        m_state = State::Relaying;
        QByteArray head = m_method + ' ';
        QByteArray path = m_url.path(QUrl::FullyEncoded).toLatin1();
        if (path.isEmpty())
            path = "/";
        head += path;
        if (m_url.hasQuery())
            head += '?' + m_url.query(QUrl::FullyEncoded).toLatin1();
        head += ' ' + m_version + "\r\nHost: " + m_decision.target.authority().toLatin1() + "\r\n";
        for (const QByteArray &line : std::as_const(m_headerLines)) {
            const QByteArray trimmed = line.trimmed();
            if (trimmed.isEmpty())
                continue;
            const qsizetype colon = trimmed.indexOf(':');
            if (colon <= 0 || isHopHeader(trimmed.left(colon)))
                continue;
            head += trimmed + "\r\n";
        }
        head += "Connection: close\r\n\r\n";
        m_upstream->write(head);
        if (!m_early.isEmpty())
            m_upstream->write(std::exchange(m_early, {}));
        pump(m_client, m_upstream);
    }

    // The tunnel's first client bytes, held in m_hello: forwarded once they are known not to be
    // TLS, or to be a ClientHello for the granted host; otherwise the tunnel is closed with
    // nothing of them sent.
    void inspectHello()
    {
        const qint64 room = qint64(tls::kMaxHelloBytes) - m_hello.size();
        if (room > 0 && m_client->bytesAvailable() > 0) {
            m_hello.append(m_client->read(room));
            touch();
        }
        if (m_hello.isEmpty() || m_hello.size() < m_helloNeeded)
            return;
        const tls::HelloScan scan =
                tls::scanClientHello(std::string_view(m_hello.constData(), m_hello.size()));
        switch (scan.verdict) {
        case tls::HelloScan::Verdict::NeedMore:
            m_helloNeeded = qsizetype(scan.helloBytes);
            // A hello that has begun must be whole soon: it holds a slot of the client's.
            if (!m_timer.isActive())
                m_timer.start(m_proxy->m_options.connectTimeoutMs);
            return;
        case tls::HelloScan::Verdict::Refused:
            refuseTunnel("tls_client_hello", QString::fromStdString(scan.problem));
            return;
        case tls::HelloScan::Verdict::Hello: {
            const std::string mismatch =
                    tls::serverNameMismatch(scan.serverName, m_decision.target.host.toStdString(),
                                            m_decision.target.literal.has_value());
            if (!mismatch.empty()) {
                refuseTunnel("tls_server_name", QString::fromStdString(mismatch));
                return;
            }
            break;
        }
        case tls::HelloScan::Verdict::NotTls:
            break;
        }
        m_timer.stop();
        if (scan.verdict == tls::HelloScan::Verdict::Hello && startIntercepting())
            return;
        m_state = State::Relaying;
        m_upstream->write(std::exchange(m_hello, {}));
        pump(m_client, m_upstream);
    }

    // A tunnel to a host with a secret bound goes through a SecretTunnel from its hello on.
    bool startIntercepting()
    {
        const EgressProxy::Options &options = m_proxy->m_options;
        const GateSecret *secret = options.secrets && options.authority
                ? options.secrets->forTarget(m_decision.target.host, m_decision.target.port)
                : nullptr;
        if (!secret)
            return false;
        QString error;
        SSL_CTX *server = options.authority->serverContextFor(m_decision.target.host, &error);
        if (!server) {
            refuseTunnel("secret_tls", error);
            return true;
        }
        m_secretTunnel = std::make_unique<SecretTunnel>(
                *secret, server, options.authority->upstreamContext(), m_decision.target.host,
                m_decision.target.port);
        m_secretName = secret->name;
        m_state = State::Intercepting;
        m_secretTunnel->fromClient(std::exchange(m_hello, {}));
        flushIntercepted();
        return true;
    }

    void interceptFromClient()
    {
        while (m_client->bytesAvailable() > 0 && m_upstream->bytesToWrite() < maxPendingBytes) {
            m_secretTunnel->fromClient(m_client->read(64 * 1024));
            touch();
        }
        flushIntercepted();
    }

    void interceptFromUpstream()
    {
        while (m_upstream->bytesAvailable() > 0 && m_client->bytesToWrite() < maxPendingBytes) {
            const QByteArray chunk = m_upstream->read(64 * 1024);
            m_relayed += chunk.size();
            m_secretTunnel->fromUpstream(chunk);
            touch();
        }
        flushIntercepted();
    }

    // Writes what the tunnel has for each side; reports the secret's presentation once and the
    // tunnel's problem; closes both sides when it is done.
    void flushIntercepted()
    {
        if (const QByteArray out = m_secretTunnel->takeForUpstream(); !out.isEmpty())
            m_upstream->write(out);
        if (const QByteArray out = m_secretTunnel->takeForClient(); !out.isEmpty())
            m_client->write(out);
        if (!m_presentedReported && m_secretTunnel->presented()) {
            m_presentedReported = true;
            Q_EMIT m_proxy->presented(m_secretName, m_decision.target.authority());
        }
        if (!m_secretTunnel->isDone())
            return;
        if (!m_secretTunnel->problem().isEmpty()) {
            spdlog::debug("egress proxy: {}: {}", m_targetText.toStdString(),
                          m_secretTunnel->problem().toStdString());
            Q_EMIT m_proxy->refused(m_targetText, m_secretTunnel->problem());
        }
        // The server's side is finished with: none of its raw bytes may reach the job now.
        m_state = State::Closing;
        m_upstream->disconnect(this);
        m_upstream->disconnectFromHost();
        m_upstream->deleteLater();
        m_upstream = nullptr;
        m_client->disconnectFromHost();
        if (m_client->state() == QAbstractSocket::UnconnectedState)
            deleteLater();
    }

    void refuseTunnel(const char *rule, const QString &problem)
    {
        const QString reason =
                QStringLiteral("refused (%1): %2; the tunnel was closed before any of it was "
                               "forwarded")
                        .arg(QLatin1String(rule), problem);
        spdlog::debug("egress proxy: {}: {}", m_targetText.toStdString(), reason.toStdString());
        Q_EMIT m_proxy->refused(m_targetText, reason);
        close();
    }

    void touch() { m_lastActivity = std::chrono::steady_clock::now(); }

    // Runs when the idle bound may have passed: closes the connection if no byte moved since,
    // else waits for the rest of the bound (so a busy tunnel costs a clock read per chunk, not
    // a timer restart).
    void checkIdle()
    {
        using namespace std::chrono;
        const auto idle = steady_clock::now() - m_lastActivity;
        const milliseconds bound(m_proxy->m_options.idleTimeoutMs);
        if (idle < bound) {
            m_idleTimer.start(int(duration_cast<milliseconds>(bound - idle).count()) + 1);
            return;
        }
        spdlog::debug("egress proxy: {}: nothing moved for {} ms; closed",
                      m_targetText.toStdString(), m_proxy->m_options.idleTimeoutMs);
        close();
    }

    void onUpstreamData()
    {
        if (m_state == State::Intercepting) {
            interceptFromUpstream();
            return;
        }
        if (m_state != State::Relaying && m_state != State::Inspecting && m_state != State::Closing)
            return;
        if (!m_upstream)
            return;
        const qint64 before = m_relayed;
        m_relayed += pump(m_upstream, m_client);
        if (m_relayed > m_proxy->m_options.maxResponseBytes
            && before <= m_proxy->m_options.maxResponseBytes) {
            spdlog::debug("egress proxy: {} exceeded {} bytes; cut off", m_targetText.toStdString(),
                          m_proxy->m_options.maxResponseBytes);
            Q_EMIT m_proxy->refused(m_targetText,
                                    QStringLiteral("the response is larger than WEB_MAX_BYTES "
                                                   "(%1 bytes); the connection was cut")
                                            .arg(m_proxy->m_options.maxResponseBytes));
            close();
        }
        if (m_state == State::Closing && m_upstream && m_upstream->bytesAvailable() == 0)
            finishClosing();
    }

    // Moves what `from` has to `to` while `to` is not backed up; returns the bytes moved.
    qint64 pump(QTcpSocket *from, QTcpSocket *to)
    {
        if (!from || !to || (m_state == State::Closing && from == m_client))
            return 0;
        qint64 moved = 0;
        while (from->bytesAvailable() > 0 && to->bytesToWrite() < maxPendingBytes) {
            const QByteArray chunk = from->read(64 * 1024);
            if (chunk.isEmpty())
                break;
            to->write(chunk);
            moved += chunk.size();
        }
        if (moved > 0)
            touch();
        return moved;
    }

    void onClientGone()
    {
        if (m_upstream)
            m_upstream->abort();
        deleteLater();
    }

    void onUpstreamGone()
    {
        if (m_state == State::Intercepting) {
            interceptFromUpstream();
            if (m_state == State::Intercepting) {
                m_secretTunnel->upstreamEnded();
                flushIntercepted();
            }
            return;
        }
        // Deliver what is left, then close the client.
        m_state = State::Closing;
        onUpstreamData();
        finishClosing();
    }

    void finishClosing()
    {
        if (m_upstream && m_upstream->bytesAvailable() > 0)
            return;
        m_client->disconnectFromHost();
        if (m_client->state() == QAbstractSocket::UnconnectedState)
            deleteLater();
    }

    void answerAndClose(int status, const QByteArray &reason, const QString &body)
    {
        m_state = State::Closing;
        m_client->write(EgressProxy::statusResponse(status, reason, body));
        m_client->disconnectFromHost();
        if (m_client->state() == QAbstractSocket::UnconnectedState)
            deleteLater();
    }

    void close()
    {
        m_state = State::Closing;
        if (m_upstream) {
            m_upstream->disconnect(this);
            m_upstream->abort();
        }
        m_client->abort();
        deleteLater();
    }

    EgressProxy *m_proxy;
    QTcpSocket *m_client;
    QTcpSocket *m_upstream = nullptr;
    QTimer m_timer;
    QTimer m_idleTimer;
    std::chrono::steady_clock::time_point m_lastActivity;
    State m_state = State::ReadingHead;
    QByteArray m_head;
    QByteArray m_early; // client bytes that came with the head
    QByteArray m_hello; // a tunnel's first client bytes, while they are inspected
    qsizetype m_helloNeeded = 0; // bytes m_hello must have before it is scanned again
    QByteArray m_method;
    QByteArray m_version;
    QList<QByteArray> m_headerLines;
    QUrl m_url;
    QString m_targetText;
    bool m_tunnel = false;
    EgressDecision m_decision;
    int m_addressIndex = -1;
    qint64 m_relayed = 0;
    std::unique_ptr<SecretTunnel> m_secretTunnel;
    QString m_secretName;
    bool m_presentedReported = false;
};

EgressProxy::EgressProxy(std::shared_ptr<const EgressGate> gate, Options options, QObject *parent)
    : QObject(parent),
      m_gate(std::move(gate)),
      m_options(options),
      m_server(new QTcpServer(this))
{
    connect(m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *client = m_server->nextPendingConnection()) {
            if (m_options.maxConnections > 0 && m_open.size() >= m_options.maxConnections) {
                spdlog::debug("egress proxy: {} connections open; one more closed", m_open.size());
                Q_EMIT refused(QStringLiteral("a connection"),
                               QStringLiteral("refused (connections): %1 are open already")
                                       .arg(m_open.size()));
                client->abort();
                client->deleteLater();
                continue;
            }
            if (m_options.onlyPeerUid) {
                const std::optional<uid_t> peer = loopbackPeerUid(*client);
                if (peer != m_options.onlyPeerUid) {
                    spdlog::warn("egress proxy: a connection from {} (uid {}) closed: only uid {} "
                                 "may use this proxy",
                                 client->peerAddress().toString().toStdString(),
                                 peer ? std::to_string(*peer) : std::string("unknown"),
                                 *m_options.onlyPeerUid);
                    client->abort();
                    client->deleteLater();
                    continue;
                }
            }
            new ProxyConnection(this, client);
        }
    });
}

EgressProxy::~EgressProxy()
{
    m_server->close();
    // Connections are children: deleted before the server goes.
    const QSet<ProxyConnection *> open = m_open;
    qDeleteAll(open);
}

bool EgressProxy::serveListening(qintptr descriptor)
{
    return m_server->setSocketDescriptor(descriptor);
}

quint16 EgressProxy::listen(const QHostAddress &address, quint16 port)
{
    return m_server->listen(address, port) ? m_server->serverPort() : 0;
}

} // namespace cmcp
