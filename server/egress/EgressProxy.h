#pragma once

#include "egress/EgressGate.h"
#include "egress/GateSecrets.h"

#include <QHostAddress>
#include <QObject>
#include <QSet>
#include <QTcpServer>

#include <sys/types.h>

#include <memory>
#include <optional>

namespace cmcp {

class GateAuthority;

// An HTTP forward proxy on loopback that lets a connection through only to an address the egress
// gate checked: cmcp-browser hands it to Chromium (--proxy-server), so that every connection of
// every page, redirects and subresources included, is decided by the gate and goes to the
// address the gate resolved, never to a second DNS answer. It speaks the two forms browsers use:
// CONNECT host:port (https, wss) as a tunnel, and GET http://host/path (plain http), which it
// forwards with the path alone and Connection: close. Refusals answer 403 with the reason.
//
// A tunnel's first bytes are held until they show what they are: a TLS ClientHello (whole,
// however many segments it comes in, up to tls::kMaxHelloBytes) must name the host the CONNECT
// was granted for, or none, so that a tunnel granted for one site cannot be fronted to another
// behind the same address; a hello naming another host, or malformed, or too large, closes the
// tunnel before any of it is forwarded, and is reported like any refusal (rule
// tls_server_name or tls_client_hello). Bytes that do not begin a TLS record (a plain protocol)
// go through unchecked. Only that first hello is copied; then bytes flow as before.
//
// A tunnel to a host one of `secrets` is bound to, whose hello passed, is not relayed but opened
// (SecretTunnel): the job's TLS ends at the proxy, answered by the authority's certificate for
// that host, and the secret goes into the request on the proxy's own verified connection.
class EgressProxy : public QObject
{
    Q_OBJECT
public:
    // The title of the page the proxy answers with itself (a refusal, a server it cannot
    // reach): a browser shows it as the page, and the worker tells it from the site by this.
    static constexpr const char *pageTitle = "Container-MCP egress proxy";

    struct Options
    {
        // Bytes one connection may bring from the server; beyond it the connection is cut.
        qint64 maxResponseBytes = 10 * 1024 * 1024;
        int connectTimeoutMs = 30000;
        // Connections open at once; a further one is closed unanswered. 0: no bound. Each
        // client of the gate (a job, a browser worker) has a proxy of its own, so this is a
        // bound per client.
        qsizetype maxConnections = 0;
        // A connection whose request was answered (a tunnel, a forwarded request) and on which
        // no byte has moved either way for this long is closed (EGRESS_IDLE_SECONDS). A
        // connection still sending its request head has connectTimeoutMs for all of it, and
        // so has a tunnel's ClientHello once it has begun. 0: no bound.
        int idleTimeoutMs = 300 * 1000;
        // For a proxy listening on the host's loopback, which every local user can reach: the
        // one uid whose connections it serves (loopbackPeerUid); others are closed unanswered.
        std::optional<uid_t> onlyPeerUid = std::nullopt;
        // The secrets this client's requests may be given, and the authority that lets the
        // proxy open their tunnels; without both, every tunnel is relayed as it is.
        std::shared_ptr<const SecretBindings> secrets = nullptr;
        std::shared_ptr<GateAuthority> authority = nullptr;
    };

    // The proxy's own answer: a small page titled pageTitle, then the connection closes.
    static QByteArray statusResponse(int status, const QByteArray &reason, const QString &body);

    EgressProxy(std::shared_ptr<const EgressGate> gate, Options options, QObject *parent = nullptr);
    ~EgressProxy() override;

    // 0 when it cannot listen.
    quint16 listen(const QHostAddress &address = QHostAddress::LocalHost, quint16 port = 0);
    // Serves a socket that is listening already (a job's, made in its own network namespace);
    // takes it over. False when Qt cannot use it.
    bool serveListening(qintptr descriptor);
    quint16 port() const { return m_server->serverPort(); }
    qsizetype openConnections() const { return m_open.size(); }

Q_SIGNALS:
    // A connection the gate refused: the target as the client asked for it (a URL, or
    // host:port for CONNECT) and the gate's reason.
    void refused(const QString &target, const QString &reason);
    // The secret named `secret` went to `target` (host:port) in a request.
    void presented(const QString &secret, const QString &target);

private:
    friend class ProxyConnection;

    std::shared_ptr<const EgressGate> m_gate;
    Options m_options;
    QTcpServer *m_server; // a child: it moves with the proxy to another thread
    QSet<class ProxyConnection *> m_open;
};

} // namespace cmcp
