#pragma once

#include <QByteArray>
#include <QString>

namespace cmcp {

// What a fetched body is, judged by its Content-Type and, where that says nothing, by its first
// bytes.
enum class BodyKind { Html, Text, Binary };

BodyKind bodyKind(const QByteArray &contentType, const QByteArray &body);

// The body as UTF-8, from the encoding its byte order mark, Content-Type charset or <meta
// charset> names (in that order), else UTF-8, else (when that does not decode) windows-1252 as
// browsers assume. Undecodable bytes become U+FFFD.
QByteArray bodyAsUtf8(const QByteArray &contentType, const QByteArray &body, BodyKind kind);

} // namespace cmcp
