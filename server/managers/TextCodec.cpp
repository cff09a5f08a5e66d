#include "managers/TextCodec.h"

#include <QStringDecoder>
#include <QStringEncoder>

namespace cmcp {

std::optional<TextCodec> TextCodec::forName(const QString &name, QString *error)
{
    TextCodec codec;
    codec.m_name = name;
    if (name.compare(QLatin1String("base64"), Qt::CaseInsensitive) == 0) {
        codec.m_base64 = true;
        return codec;
    }
    const std::optional<QStringConverter::Encoding> encoding =
            QStringConverter::encodingForName(name.toLatin1().constData());
    if (!encoding) {
        *error = QStringLiteral("unknown encoding '%1': use utf-8, latin-1, utf-16 or base64 (for "
                                "binary content)")
                         .arg(name);
        return std::nullopt;
    }
    codec.m_encoding = int(*encoding);
    return codec;
}

bool TextCodec::isAsciiCompatible() const
{
    const auto encoding = QStringConverter::Encoding(m_encoding);
    return !m_base64
            && (encoding == QStringConverter::Utf8 || encoding == QStringConverter::Latin1
                || encoding == QStringConverter::System);
}

std::optional<QString> TextCodec::decode(const QByteArray &bytes, QString *error) const
{
    if (m_base64)
        return QString::fromLatin1(bytes.toBase64());
    QStringDecoder decoder(QStringConverter::Encoding(m_encoding),
                           QStringConverter::Flag::Stateless);
    QString text = decoder.decode(bytes);
    if (decoder.hasError()) {
        *error = QStringLiteral("content is not valid %1; read it with encoding \"base64\"")
                         .arg(m_name);
        return std::nullopt;
    }
    return text;
}

std::optional<QByteArray> TextCodec::decodeToUtf8(const QByteArray &bytes, QString *error) const
{
    if (m_base64)
        return bytes.toBase64();
    if (QStringConverter::Encoding(m_encoding) != QStringConverter::Utf8) {
        std::optional<QString> text = decode(bytes, error);
        return text ? std::optional<QByteArray>(text->toUtf8()) : std::nullopt;
    }
    // The same verdict as the strict decoder, which also drops a leading byte order mark.
    if (!bytes.isValidUtf8()) {
        *error = QStringLiteral("content is not valid %1; read it with encoding \"base64\"")
                         .arg(m_name);
        return std::nullopt;
    }
    static constexpr char bom[] = "\xEF\xBB\xBF";
    if (bytes.startsWith(QByteArrayView(bom, 3)))
        return bytes.sliced(3);
    return bytes;
}

std::optional<QByteArray> TextCodec::encode(const QString &text, QString *error) const
{
    if (m_base64) {
        const QByteArray::FromBase64Result decoded = QByteArray::fromBase64Encoding(
                text.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
        // Characters outside Latin-1 become '?', which the strict decoder refuses.
        if (!decoded) {
            *error = QStringLiteral("content is not valid base64");
            return std::nullopt;
        }
        return decoded.decoded;
    }
    if (!text.isValidUtf16()) {
        *error = QStringLiteral("content holds an unpaired surrogate, which no encoding can store");
        return std::nullopt;
    }
    QStringEncoder encoder(QStringConverter::Encoding(m_encoding),
                           QStringConverter::Flag::Stateless);
    QByteArray bytes = encoder.encode(text);
    if (encoder.hasError()) {
        *error = QStringLiteral("content cannot be encoded as %1").arg(m_name);
        return std::nullopt;
    }
    return bytes;
}

} // namespace cmcp
