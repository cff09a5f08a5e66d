#pragma once

#include <QByteArray>
#include <QString>

#include <openssl/types.h>

#include <string>

namespace cmcp {

// One TLS connection driven through memory buffers instead of a socket: ciphertext is fed in as
// it arrives and taken out to be written, so that the caller keeps its own sockets, timers and
// bounds (the egress proxy's). OpenSSL does the protocol; this only moves bytes.
class TlsEngine
{
public:
    enum class Role { Server, Client };

    // `context` is shared (its reference is taken). A client verifies the server as `peerName`
    // (a host name, or an IP address written as one) and sends it as SNI when it is a name.
    TlsEngine(SSL_CTX *context, Role role, const std::string &peerName = {});
    ~TlsEngine();
    TlsEngine(const TlsEngine &) = delete;
    TlsEngine &operator=(const TlsEngine &) = delete;

    // Ciphertext from the peer.
    void feed(QByteArrayView cipher);
    // Plaintext for the peer: written once the handshake is done.
    void send(QByteArrayView plain);
    // Ends our side with close_notify (after what was sent).
    void close();

    QByteArray takePlain() { return std::exchange(m_plainIn, {}); }
    QByteArray takeCipher();

    bool isEstablished() const { return m_established; }
    bool peerClosed() const { return m_peerClosed; }
    bool hasFailed() const { return !m_error.isEmpty(); }
    // Why the connection failed (a verification error names the certificate's problem).
    const QString &error() const { return m_error; }

private:
    void advance();
    void fail(int sslError);

    SSL *m_ssl = nullptr;
    BIO *m_in = nullptr; // ciphertext from the peer, read by OpenSSL
    BIO *m_out = nullptr; // ciphertext OpenSSL wrote for the peer
    QByteArray m_plainIn;
    QByteArray m_plainOut; // plaintext waiting for the handshake
    bool m_established = false;
    bool m_peerClosed = false;
    bool m_closing = false;
    QString m_error;
};

} // namespace cmcp
