#include "mcp/RequestState.h"

#include <QJsonDocument>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace cmcp {

namespace {

constexpr auto Base64 = QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals;
const QLatin1String ExpiryKey("exp");

} // namespace

RequestStateSigner::RequestStateSigner() : m_key(MinimumKeyBytes, '\0')
{
    if (RAND_bytes(reinterpret_cast<unsigned char *>(m_key.data()), int(m_key.size())) != 1)
        throw std::runtime_error("the random number generator gave no key for request states");
}

QByteArray RequestStateSigner::mac(const QByteArray &data) const
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!HMAC(EVP_sha256(), m_key.constData(), int(m_key.size()),
              reinterpret_cast<const unsigned char *>(data.constData()), size_t(data.size()),
              digest, &length))
        throw std::runtime_error("HMAC-SHA256 failed");
    return QByteArray(reinterpret_cast<const char *>(digest), int(length));
}

QString RequestStateSigner::seal(QJsonObject payload, qint64 nowMs) const
{
    payload.insert(ExpiryKey, double(nowMs + LifetimeMs));
    const QByteArray body = QJsonDocument(payload).toJson(QJsonDocument::Compact).toBase64(Base64);
    return QString::fromLatin1(body + '.' + mac(body).toBase64(Base64));
}

std::variant<QJsonObject, QString> RequestStateSigner::open(const QString &state,
                                                            qint64 nowMs) const
{
    const QByteArray text = state.toLatin1();
    const qsizetype dot = text.indexOf('.');
    const auto signature = QByteArray::fromBase64Encoding(
            text.mid(dot + 1), Base64 | QByteArray::AbortOnBase64DecodingErrors);
    const QByteArray expected = mac(text.left(dot));
    if (dot <= 0 || !signature || signature.decoded.size() != expected.size()
        || CRYPTO_memcmp(signature.decoded.constData(), expected.constData(),
                         size_t(expected.size()))
                != 0)
        return QStringLiteral("requestState is not one this server issued, or it was altered");
    const QJsonObject payload =
            QJsonDocument::fromJson(QByteArray::fromBase64(text.left(dot), Base64)).object();
    if (payload.value(ExpiryKey).toDouble() < double(nowMs))
        return QStringLiteral("requestState has expired (it is valid for %1 minutes): send the "
                              "request again without it")
                .arg(LifetimeMs / 60000);
    return payload;
}

} // namespace cmcp
