#include "web/PageText.h"

#include <QRegularExpression>
#include <QStringDecoder>

namespace cmcp {

namespace {

QByteArray mimeType(const QByteArray &contentType)
{
    const qsizetype semicolon = contentType.indexOf(';');
    return (semicolon < 0 ? contentType : contentType.left(semicolon)).trimmed().toLower();
}

QByteArray charsetOf(const QByteArray &contentType)
{
    static const QRegularExpression charset(
            QStringLiteral(R"(charset\s*=\s*["']?([A-Za-z0-9._:\-]+))"),
            QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch match = charset.match(QString::fromLatin1(contentType));
    return match.hasMatch() ? match.captured(1).toLatin1() : QByteArray();
}

// <meta charset=...> or <meta http-equiv=Content-Type content="...; charset=...">, looked for
// where the HTML standard's prescan looks: the first 1,024 bytes.
QByteArray metaCharset(const QByteArray &body)
{
    static const QRegularExpression meta(
            QStringLiteral(R"(<meta[^>]*?charset\s*=\s*["']?([A-Za-z0-9._:\-]+))"),
            QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch match = meta.match(QString::fromLatin1(body.left(1024)));
    return match.hasMatch() ? match.captured(1).toLatin1() : QByteArray();
}

bool looksLikeHtml(const QByteArray &body)
{
    const QByteArray start = body.left(512).trimmed().toLower();
    return start.startsWith("<!doctype html") || start.startsWith("<html")
            || start.startsWith("<head") || start.startsWith("<body") || start.startsWith("<!--")
            || start.contains("<html") || start.contains("<title") || start.contains("<p>")
            || start.contains("<div");
}

bool looksBinary(const QByteArray &body)
{
    // NUL bytes do not occur in text (UTF-16 has its own byte order mark, checked first).
    return body.left(1024).contains('\0');
}

bool hasUtf16Bom(const QByteArray &body)
{
    return body.startsWith("\xff\xfe") || body.startsWith("\xfe\xff");
}

} // namespace

BodyKind bodyKind(const QByteArray &contentType, const QByteArray &body)
{
    const QByteArray type = mimeType(contentType);
    if (type == "text/html" || type == "application/xhtml+xml")
        return BodyKind::Html;
    if (type.startsWith("text/") || type == "application/json" || type.endsWith("+json")
        || type == "application/xml" || type.endsWith("+xml") || type == "application/javascript"
        || type == "application/x-javascript" || type == "application/ecmascript")
        return BodyKind::Text;
    if (type.isEmpty() || type == "application/octet-stream" || type == "unknown/unknown") {
        if (hasUtf16Bom(body))
            return looksLikeHtml(
                           QString::fromUtf16(reinterpret_cast<const char16_t *>(body.constData()),
                                              body.size() / 2)
                                   .toUtf8())
                    ? BodyKind::Html
                    : BodyKind::Text;
        if (looksBinary(body))
            return BodyKind::Binary;
        return looksLikeHtml(body) ? BodyKind::Html : BodyKind::Text;
    }
    return BodyKind::Binary;
}

QByteArray bodyAsUtf8(const QByteArray &contentType, const QByteArray &body, BodyKind kind)
{
    if (body.startsWith("\xef\xbb\xbf"))
        return body.mid(3);
    QByteArray charset;
    if (body.startsWith("\xff\xfe"))
        charset = "utf-16le";
    else if (body.startsWith("\xfe\xff"))
        charset = "utf-16be";
    if (charset.isEmpty())
        charset = charsetOf(contentType);
    if (charset.isEmpty() && kind == BodyKind::Html)
        charset = metaCharset(body);
    const QByteArray lowered = charset.toLower();
    if (charset.isEmpty() || lowered == "utf-8" || lowered == "utf8") {
        // Stateless: a sequence cut off at the end is an error too, not a wait for more bytes.
        QStringDecoder utf8(QStringDecoder::Utf8, QStringConverter::Flag::Stateless);
        const QString decoded = utf8.decode(body);
        if (!utf8.hasError() || !charset.isEmpty())
            return body; // gumbo and QString read invalid sequences as U+FFFD themselves
        charset = "windows-1252";
    }
    QStringDecoder decoder(charset.constData());
    if (!decoder.isValid())
        return body;
    const qsizetype skip = hasUtf16Bom(body) ? 2 : 0;
    return QString(decoder.decode(QByteArrayView(body).sliced(skip))).toUtf8();
}

} // namespace cmcp
