#pragma once

#include <QByteArray>
#include <QHash>
#include <QMutex>
#include <QString>

#include <openssl/types.h>

#include <memory>

namespace cmcp {

// The daemon's own certificate authority for the egress gate's interception: jobs trust its
// certificate (the daemon points their TLS libraries at a bundle holding it), and the gate
// answers a tunnel to a host that has a secret bound with a certificate for that host signed by
// it, so that it can add the credential inside TLS. Its private key is made at start-up and
// never leaves the daemon's memory: no file, no environment, nothing a job can read; a new
// daemon has a new authority.
//
// Upstream, the gate is an ordinary verifying client: the system's roots, and the operator's own
// (a private PKI) when given.
class GateAuthority
{
public:
    // nullptr with the reason when OpenSSL cannot make the keys, or `extraRootsFile` (PEM,
    // optional) cannot be read.
    static std::unique_ptr<GateAuthority> create(const QString &extraRootsFile, QString *error);
    ~GateAuthority();
    GateAuthority(const GateAuthority &) = delete;
    GateAuthority &operator=(const GateAuthority &) = delete;

    // The authority's certificate, PEM.
    const QByteArray &certificatePem() const { return m_certificatePem; }
    // The context that answers as `host` (a name or an IP address): made once per host, with a
    // certificate naming exactly it. Offers HTTP/1.1 only. Owned by the authority.
    SSL_CTX *serverContextFor(const QString &host, QString *error);
    // The context that connects to upstream servers, verifying them.
    SSL_CTX *upstreamContext() const { return m_upstream; }

private:
    GateAuthority() = default;

    EVP_PKEY *m_key = nullptr; // the authority's
    EVP_PKEY *m_leafKey = nullptr; // every host certificate's
    X509 *m_certificate = nullptr;
    QByteArray m_certificatePem;
    SSL_CTX *m_upstream = nullptr;
    // One per host a secret is bound to: as many as the configuration names.
    QHash<QString, SSL_CTX *> m_servers;
    QMutex m_serversLock; // proxies of several threads may ask
};

} // namespace cmcp
