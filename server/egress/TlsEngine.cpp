#include "egress/TlsEngine.h"

#include <QHostAddress>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace cmcp {

namespace {

QString openSslErrors()
{
    QStringList lines;
    while (const unsigned long code = ERR_get_error()) {
        char text[256];
        ERR_error_string_n(code, text, sizeof text);
        lines.append(QString::fromLatin1(text));
    }
    return lines.join(QLatin1String("; "));
}

} // namespace

TlsEngine::TlsEngine(SSL_CTX *context, Role role, const std::string &peerName)
    : m_ssl(SSL_new(context)),
      m_in(BIO_new(BIO_s_mem())),
      m_out(BIO_new(BIO_s_mem()))
{
    if (!m_ssl || !m_in || !m_out) {
        m_error = QStringLiteral("cannot set up TLS: ") + openSslErrors();
        return;
    }
    BIO_set_mem_eof_return(m_in, -1); // empty means "more to come", not end of stream
    SSL_set_bio(m_ssl, m_in, m_out); // the SSL owns both now
    if (role == Role::Server) {
        SSL_set_accept_state(m_ssl);
        return;
    }
    SSL_set_connect_state(m_ssl);
    const bool literal = !QHostAddress(QString::fromStdString(peerName)).isNull();
    X509_VERIFY_PARAM *verify = SSL_get0_param(m_ssl);
    if (literal) {
        X509_VERIFY_PARAM_set1_ip_asc(verify, peerName.c_str());
    } else {
        SSL_set_tlsext_host_name(m_ssl, peerName.c_str());
        X509_VERIFY_PARAM_set_hostflags(verify, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        X509_VERIFY_PARAM_set1_host(verify, peerName.c_str(), peerName.size());
    }
    SSL_set_verify(m_ssl, SSL_VERIFY_PEER, nullptr);
    advance(); // the ClientHello
}

TlsEngine::~TlsEngine()
{
    if (m_ssl) {
        SSL_free(m_ssl); // and the BIOs it owns
    } else {
        BIO_free(m_in);
        BIO_free(m_out);
    }
}

void TlsEngine::feed(QByteArrayView cipher)
{
    if (hasFailed() || cipher.isEmpty())
        return;
    BIO_write(m_in, cipher.data(), int(cipher.size()));
    advance();
}

void TlsEngine::send(QByteArrayView plain)
{
    if (hasFailed() || m_closing)
        return;
    m_plainOut.append(plain);
    advance();
}

void TlsEngine::close()
{
    if (hasFailed() || m_closing)
        return;
    m_closing = true;
    advance();
}

QByteArray TlsEngine::takeCipher()
{
    QByteArray out;
    char buffer[16 * 1024];
    int n;
    while ((n = BIO_read(m_out, buffer, sizeof buffer)) > 0)
        out.append(buffer, n);
    return out;
}

void TlsEngine::advance()
{
    if (hasFailed())
        return;
    ERR_clear_error(); // the queue is the thread's: another connection's errors are not ours
    if (!m_established) {
        const int result = SSL_do_handshake(m_ssl);
        if (result != 1) {
            const int why = SSL_get_error(m_ssl, result);
            if (why != SSL_ERROR_WANT_READ && why != SSL_ERROR_WANT_WRITE)
                fail(why);
            return;
        }
        m_established = true;
    }
    while (!m_plainOut.isEmpty()) {
        const int written = SSL_write(m_ssl, m_plainOut.constData(), int(m_plainOut.size()));
        if (written <= 0) {
            fail(SSL_get_error(m_ssl, written));
            return;
        }
        m_plainOut.remove(0, written);
    }
    char buffer[16 * 1024];
    for (;;) {
        const int n = SSL_read(m_ssl, buffer, sizeof buffer);
        if (n > 0) {
            m_plainIn.append(buffer, n);
            continue;
        }
        const int why = SSL_get_error(m_ssl, n);
        if (why == SSL_ERROR_ZERO_RETURN)
            m_peerClosed = true;
        else if (why != SSL_ERROR_WANT_READ && why != SSL_ERROR_WANT_WRITE)
            fail(why);
        break;
    }
    if (m_closing && !hasFailed())
        SSL_shutdown(m_ssl);
}

void TlsEngine::fail(int sslError)
{
    const long verify = SSL_get_verify_result(m_ssl);
    if (verify != X509_V_OK)
        m_error = QStringLiteral("the certificate was not accepted: %1")
                          .arg(QString::fromLatin1(X509_verify_cert_error_string(verify)));
    else if (const QString detail = openSslErrors(); !detail.isEmpty())
        m_error = detail;
    else
        m_error = sslError == SSL_ERROR_SYSCALL ? QStringLiteral("the TLS stream ended abruptly")
                                                : QStringLiteral("TLS error %1").arg(sslError);
}

} // namespace cmcp
