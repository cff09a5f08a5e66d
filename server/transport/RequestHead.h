#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QString>

#include <optional>

namespace cmcp {

// The request line and headers of one HTTP/1.1 request, read from its header block: what a
// route sees of a request whose body it reads itself, as a stream (QHttpServerRequest holds a
// whole body and cannot be made without one).
struct RequestHead
{
    QByteArray method;
    QString path; // of the request target, percent-decoded as QUrl::path() gives it
    QByteArray target; // the request target as the client wrote it (path and query)
    QList<QPair<QByteArray, QByteArray>> headers; // names in lower case, values trimmed
    QHostAddress peer;

    // The value of header `name` (lower case); the last one when it repeats, as RequestFraming
    // reads Content-Length.
    QByteArray value(QByteArrayView name) const;
    qint64 contentLength() const { return value("content-length").toLongLong(); }

    // Null for a block whose request line is not "METHOD target HTTP/1.x".
    static std::optional<RequestHead> parse(const QByteArray &block);
};

} // namespace cmcp
