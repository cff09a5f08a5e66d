#pragma once

#include <QByteArray>
#include <QString>

#include <optional>

namespace cmcp {

// The `encoding` argument of the file tools: "base64" for binary content carried as base64
// text, or the name of a text encoding Qt knows ("utf-8", "latin-1", "utf-16", ...).
class TextCodec
{
public:
    // nullopt, with the reason, for an encoding nobody knows.
    static std::optional<TextCodec> forName(const QString &name, QString *error);

    // Lines can be cut at '\n' bytes only where every character below 0x80 is one byte.
    bool isAsciiCompatible() const;

    // Strict both ways: undecodable bytes or unencodable characters are errors, never
    // replacement characters silently written to or read from a file.
    std::optional<QString> decode(const QByteArray &bytes, QString *error) const;
    std::optional<QByteArray> encode(const QString &text, QString *error) const;
    // What decode() gives, as UTF-8. UTF-8 content is only checked and base64 only encoded, with
    // no detour through UTF-16: a tool that serializes the text as UTF-8 saves two conversions.
    std::optional<QByteArray> decodeToUtf8(const QByteArray &bytes, QString *error) const;

private:
    QString m_name;
    bool m_base64 = false;
    int m_encoding = 0; // QStringConverter::Encoding
};

} // namespace cmcp
