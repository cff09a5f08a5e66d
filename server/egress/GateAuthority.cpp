#include "egress/GateAuthority.h"

#include <QHostAddress>
#include <QMutexLocker>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstring>

namespace cmcp {

namespace {

// Certificates the authority signs are made for the daemon's lifetime, with an hour's slack
// for a job's clock.
constexpr long kSlackSeconds = 3600;
constexpr long kValiditySeconds = 398L * 24 * 3600;

QString lastOpenSslError(const char *what)
{
    char text[256] = "unknown error";
    if (const unsigned long code = ERR_get_error())
        ERR_error_string_n(code, text, sizeof text);
    return QStringLiteral("%1: %2").arg(QLatin1String(what), QLatin1String(text));
}

EVP_PKEY *newKey()
{
    return EVP_EC_gen("P-256");
}

bool addExtension(X509 *certificate, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
    if (!extension)
        return false;
    const bool added = X509_add_ext(certificate, extension, -1) == 1;
    X509_EXTENSION_free(extension);
    return added;
}

// A certificate for `key`, named `commonName`, with a random serial and the lifetime above;
// issued by `issuer` (itself when null); the caller adds extensions and signs.
X509 *newCertificate(EVP_PKEY *key, const QString &commonName, X509 *issuer)
{
    X509 *certificate = X509_new();
    unsigned char serial[16];
    RAND_bytes(serial, sizeof serial);
    serial[0] &= 0x7f; // positive
    BIGNUM *number = BN_bin2bn(serial, sizeof serial, nullptr);
    const bool made = certificate && number && X509_set_version(certificate, 2)
            && BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate))
            && X509_gmtime_adj(X509_getm_notBefore(certificate), -kSlackSeconds)
            && X509_gmtime_adj(X509_getm_notAfter(certificate), kValiditySeconds)
            && X509_set_pubkey(certificate, key);
    BN_free(number);
    X509_NAME *name = X509_get_subject_name(certificate);
    const QByteArray cn = commonName.left(64).toUtf8();
    if (!made
        || !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                       reinterpret_cast<const unsigned char *>(cn.constData()),
                                       int(cn.size()), -1, 0)
        || !X509_set_issuer_name(certificate, issuer ? X509_get_subject_name(issuer) : name)) {
        X509_free(certificate);
        return nullptr;
    }
    return certificate;
}

} // namespace

std::unique_ptr<GateAuthority> GateAuthority::create(const QString &extraRootsFile, QString *error)
{
    std::unique_ptr<GateAuthority> authority(new GateAuthority);
    authority->m_key = newKey();
    authority->m_leafKey = newKey();
    if (!authority->m_key || !authority->m_leafKey) {
        *error = lastOpenSslError("making the gate authority's keys");
        return nullptr;
    }
    unsigned char tag[4];
    RAND_bytes(tag, sizeof tag);
    X509 *certificate = newCertificate(
            authority->m_key,
            QStringLiteral("Container-MCP egress gate %1")
                    .arg(QString::fromLatin1(QByteArray(reinterpret_cast<char *>(tag), 4).toHex())),
            nullptr);
    if (!certificate
        || !addExtension(certificate, certificate, NID_basic_constraints,
                         "critical,CA:TRUE,pathlen:0")
        || !addExtension(certificate, certificate, NID_key_usage, "critical,keyCertSign,cRLSign")
        || !addExtension(certificate, certificate, NID_subject_key_identifier, "hash")
        || !X509_sign(certificate, authority->m_key, EVP_sha256())) {
        X509_free(certificate);
        *error = lastOpenSslError("making the gate authority's certificate");
        return nullptr;
    }
    authority->m_certificate = certificate;
    BIO *pem = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(pem, certificate);
    char *data = nullptr;
    const long size = BIO_get_mem_data(pem, &data);
    authority->m_certificatePem = QByteArray(data, int(size));
    BIO_free(pem);

    SSL_CTX *upstream = SSL_CTX_new(TLS_client_method());
    authority->m_upstream = upstream;
    if (!upstream || !SSL_CTX_set_default_verify_paths(upstream)
        || !SSL_CTX_set_min_proto_version(upstream, TLS1_2_VERSION)) {
        *error = lastOpenSslError("setting up the gate's upstream TLS");
        return nullptr;
    }
    if (!extraRootsFile.isEmpty()
        && SSL_CTX_load_verify_locations(upstream, extraRootsFile.toLocal8Bit().constData(),
                                         nullptr)
                != 1) {
        *error = QStringLiteral("cannot read the roots in %1: %2")
                         .arg(extraRootsFile, lastOpenSslError("PEM"));
        return nullptr;
    }
    static const unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(upstream, http11, sizeof http11);
    return authority;
}

GateAuthority::~GateAuthority()
{
    for (SSL_CTX *context : std::as_const(m_servers))
        SSL_CTX_free(context);
    SSL_CTX_free(m_upstream);
    X509_free(m_certificate);
    EVP_PKEY_free(m_leafKey);
    EVP_PKEY_free(m_key);
}

SSL_CTX *GateAuthority::serverContextFor(const QString &host, QString *error)
{
    const QMutexLocker lock(&m_serversLock);
    if (SSL_CTX *known = m_servers.value(host))
        return known;
    const bool literal = !QHostAddress(host).isNull();
    const QByteArray alternativeName = (literal ? "IP:" : "DNS:") + host.toLatin1();
    X509 *leaf = newCertificate(m_leafKey, host, m_certificate);
    SSL_CTX *context = leaf ? SSL_CTX_new(TLS_server_method()) : nullptr;
    const bool made = context
            && addExtension(leaf, m_certificate, NID_subject_alt_name, alternativeName.constData())
            && addExtension(leaf, m_certificate, NID_basic_constraints, "critical,CA:FALSE")
            && addExtension(leaf, m_certificate, NID_ext_key_usage, "serverAuth")
            && addExtension(leaf, m_certificate, NID_authority_key_identifier, "keyid:always")
            && X509_sign(leaf, m_key, EVP_sha256()) && SSL_CTX_use_certificate(context, leaf) == 1
            && SSL_CTX_use_PrivateKey(context, m_leafKey) == 1
            && SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    X509_free(leaf); // the context keeps its own reference
    if (!made) {
        SSL_CTX_free(context);
        *error = lastOpenSslError("making a certificate for the intercepted host");
        return nullptr;
    }
    // HTTP/1.1 whatever the client offers: the gate reads one request head.
    SSL_CTX_set_alpn_select_cb(
            context,
            [](SSL *, const unsigned char **out, unsigned char *outLength, const unsigned char *in,
               unsigned int inLength, void *) {
                for (unsigned int at = 0; at < inLength; at += 1 + in[at]) {
                    if (in[at] == 8 && at + 9 <= inLength
                        && std::memcmp(in + at + 1, "http/1.1", 8) == 0) {
                        *out = in + at + 1;
                        *outLength = 8;
                        return SSL_TLSEXT_ERR_OK;
                    }
                }
                return SSL_TLSEXT_ERR_NOACK;
            },
            nullptr);
    m_servers.insert(host, context);
    return context;
}

} // namespace cmcp
