#pragma once

// ClientHellos made byte by byte for the tests of the egress proxy's TLS scanner: the fields a
// real client sends (RFC 8446 4.1.2), each of which a test can get wrong on purpose.

#include <QByteArray>
#include <QList>
#include <QPair>

namespace cmcp::test {

inline QByteArray bigEndian(quint32 value, int bytes)
{
    QByteArray out;
    for (int i = bytes - 1; i >= 0; --i)
        out += char((value >> (8 * i)) & 0xff);
    return out;
}

inline QByteArray extension(quint16 type, const QByteArray &data)
{
    return bigEndian(type, 2) + bigEndian(quint32(data.size()), 2) + data;
}

// server_name (0) with the given (name_type, name) entries.
inline QByteArray serverNameExtension(const QList<QPair<int, QByteArray>> &names)
{
    QByteArray list;
    for (const auto &[type, name] : names)
        list += char(type) + bigEndian(quint32(name.size()), 2) + name;
    return extension(0, bigEndian(quint32(list.size()), 2) + list);
}

inline QByteArray serverNameExtension(const QByteArray &name)
{
    return serverNameExtension({{0, name}});
}

// The ClientHello's body: TLS 1.2 legacy version, a random, a 32-byte session id, two suites,
// null compression, then the extensions (none at all when `withExtensions` is false).
inline QByteArray helloBody(const QList<QByteArray> &extensions, bool withExtensions = true)
{
    QByteArray body("\x03\x03", 2);
    body += QByteArray(32, '\x5a');
    body += char(32) + QByteArray(32, '\x11');
    body += bigEndian(4, 2) + QByteArray("\x13\x01\x13\x02", 4);
    body += QByteArray("\x01\x00", 2);
    if (withExtensions) {
        QByteArray all;
        for (const QByteArray &one : extensions)
            all += one;
        body += bigEndian(quint32(all.size()), 2) + all;
    }
    return body;
}

inline QByteArray handshake(const QByteArray &body, char type = 1)
{
    return type + bigEndian(quint32(body.size()), 3) + body;
}

// The handshake message in TLS records of at most `fragment` bytes each.
inline QByteArray records(const QByteArray &message, int fragment = 16384)
{
    QByteArray out;
    for (qsizetype at = 0; at < message.size(); at += fragment) {
        const QByteArray part = message.mid(at, fragment);
        out += QByteArray("\x16\x03\x01", 3) + bigEndian(quint32(part.size()), 2) + part;
    }
    return out;
}

// A whole hello naming `name`, with the extensions real clients send around it.
inline QByteArray clientHello(const QByteArray &name)
{
    return records(handshake(
            helloBody({extension(10, QByteArray("\x00\x02\x00\x1d", 4)), serverNameExtension(name),
                       extension(43, QByteArray("\x02\x03\x04", 3))})));
}

} // namespace cmcp::test
