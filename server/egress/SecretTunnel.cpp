#include "egress/SecretTunnel.h"

#include "egress/EgressProxy.h"

namespace cmcp {

SecretTunnel::SecretTunnel(const GateSecret &secret, SSL_CTX *serverContext,
                           SSL_CTX *upstreamContext, const QString &host, quint16 port)
    : m_secret(secret),
      m_host(host),
      m_port(port),
      m_client(serverContext, TlsEngine::Role::Server),
      m_upstream(upstreamContext, TlsEngine::Role::Client, host.toStdString())
{
}

void SecretTunnel::fromClient(QByteArrayView cipher)
{
    if (m_done)
        return;
    m_client.feed(cipher);
    if (m_client.hasFailed()) {
        m_problem = QStringLiteral("the job's TLS to %1 failed (does it trust the gate's "
                                   "authority?): %2")
                            .arg(m_host, m_client.error());
        m_done = true;
        return;
    }
    if (m_answered) {
        // The answer went out with the handshake's end: nothing the job sends is read now.
        (void)m_client.takePlain();
        m_done = m_client.isEstablished();
        return;
    }
    moveClientPlain();
    checkEnds();
}

void SecretTunnel::moveClientPlain()
{
    const QByteArray plain = m_client.takePlain();
    if (plain.isEmpty())
        return;
    if (m_headSent) {
        m_upstream.send(plain);
        return;
    }
    m_head.append(plain);
    const qsizetype end = m_head.indexOf("\r\n\r\n");
    if (end < 0) {
        if (m_head.size() > kMaxHeadBytes)
            answerClient(
                    431, "Request Header Fields Too Large",
                    QStringLiteral("the request head is larger than %1 bytes").arg(kMaxHeadBytes));
        return;
    }
    const PresentedRequest request = presentSecret(m_secret, m_head.left(end + 4), m_host, m_port);
    if (!request.refusal.isEmpty()) {
        answerClient(403, "Forbidden",
                     QStringLiteral("refused (secret_request): %1; secret '%2' was not sent")
                             .arg(request.refusal, m_secret.name));
        return;
    }
    m_upstream.send(request.head + m_head.mid(end + 4));
    m_head.clear();
    m_headSent = true;
}

void SecretTunnel::fromUpstream(QByteArrayView cipher)
{
    if (m_done)
        return;
    m_upstream.feed(cipher);
    if (m_upstream.hasFailed()) {
        answerClient(502, "Bad Gateway",
                     QStringLiteral("the gate's TLS connection to %1 failed: %2")
                             .arg(m_host, m_upstream.error()));
        return;
    }
    if (!m_answered)
        m_client.send(m_upstream.takePlain());
    checkEnds();
}

void SecretTunnel::upstreamEnded()
{
    if (!m_upstream.isEstablished() && !m_answered) {
        answerClient(502, "Bad Gateway",
                     QStringLiteral("%1 closed the connection before TLS was set up").arg(m_host));
        return;
    }
    m_client.close();
    m_done = true;
}

void SecretTunnel::clientEnded()
{
    m_upstream.close();
    m_done = true;
}

void SecretTunnel::answerClient(int status, const QByteArray &reason, const QString &problem)
{
    m_problem = problem;
    m_answered = true;
    // Sent once the job's handshake is done (the engine holds it until then).
    m_client.send(EgressProxy::statusResponse(status, reason, problem));
    m_client.close();
    m_upstream.close();
    m_done = m_client.isEstablished();
}

void SecretTunnel::checkEnds()
{
    if (m_upstream.peerClosed()) {
        m_client.close();
        m_done = true;
    } else if (m_client.peerClosed()) {
        m_upstream.close();
        m_done = true;
    }
}

} // namespace cmcp
