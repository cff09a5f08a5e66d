#pragma once

#include "egress/GateSecrets.h"
#include "egress/TlsEngine.h"

#include <QByteArray>
#include <QString>

namespace cmcp {

// A CONNECT tunnel to a host that has a secret bound, opened up so that the secret can go in:
// the job's TLS ends here (the gate's authority answers as the host), the first request head is
// read, its Host checked and the credential put in (presentSecret), and it goes to the server
// over the gate's own verified TLS connection; "Connection: close" makes it the only request.
// Only bytes pass through it: the proxy connection keeps the sockets, timers and bounds, so
// everything it does is seen from outside as bytes in and bytes out.
class SecretTunnel
{
public:
    static constexpr qsizetype kMaxHeadBytes = 64 * 1024;

    // `serverContext` answers as `host`; `upstreamContext` verifies the server as `host`.
    SecretTunnel(const GateSecret &secret, SSL_CTX *serverContext, SSL_CTX *upstreamContext,
                 const QString &host, quint16 port);

    void fromClient(QByteArrayView cipher);
    void fromUpstream(QByteArrayView cipher);
    // The server's side of the TCP connection ended.
    void upstreamEnded();
    // The job's side ended.
    void clientEnded();

    QByteArray takeForClient() { return m_client.takeCipher(); }
    QByteArray takeForUpstream() { return m_upstream.takeCipher(); }

    // The credential went to the server, inside the gate's verified TLS connection.
    bool presented() const { return m_headSent && m_upstream.isEstablished(); }
    // Nothing more will pass: close both sides once what was taken out is written.
    bool isDone() const { return m_done; }
    // Why the exchange went wrong (a refused request, a certificate, a TLS failure), or empty.
    const QString &problem() const { return m_problem; }

private:
    void answerClient(int status, const QByteArray &reason, const QString &problem);
    void moveClientPlain();
    void checkEnds();

    const GateSecret &m_secret;
    QString m_host;
    quint16 m_port;
    TlsEngine m_client; // the job's TLS, answered as the host
    TlsEngine m_upstream; // ours to the server, verifying it
    QByteArray m_head; // the first request head, while it comes in
    bool m_headSent = false;
    bool m_answered = false;
    bool m_done = false;
    QString m_problem;
};

} // namespace cmcp
