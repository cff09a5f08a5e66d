#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

namespace cmcp {

// Follows the request bytes of one HTTP/1.1 connection, request by request, before the HTTP
// parser reads them: where the headers end, how long each body is, and whether a limit is
// broken (body over the limit: 413, a chunked body that cannot be bounded: 411, a bad
// Content-Length: 400, headers over 64 KiB: 431). No socket: GuardedTcpServer feeds it what it
// peeks, and the fuzz target feeds it arbitrary bytes.
class RequestFraming
{
public:
    static constexpr qint64 maxHeaderBytes = 64 * 1024;

    struct Refusal
    {
        int status = 0;
        QByteArray reason;
    };

    explicit RequestFraming(qint64 maxBodyBytes) : m_maxBody(maxBodyBytes) { }

    // The next bytes of the stream. A refusal is returned once; after it the stream is refused
    // and further bytes are ignored.
    std::optional<Refusal> feed(QByteArrayView fresh);

    bool refused() const { return m_refused; }
    qint64 bodyLeft() const { return m_bodyLeft; } // of the request being read
    // Bytes of the request being read that have arrived (its headers, its body so far): what
    // the HTTP parser holds for it until it is complete.
    qint64 bytesHeld() const
    {
        return m_bodyLeft > 0 ? m_headerLength + m_bodyLength - m_bodyLeft : m_header.size();
    }
    qsizetype headerBytes() const { return m_header.size(); } // of the header block being read
    // Requests whose headers and whole body have arrived.
    quint64 requestsComplete() const { return m_requestsComplete; }

private:
    qsizetype findHeaderEnd(QByteArrayView fresh, qsizetype from) const;
    std::optional<Refusal> inspectHeader();
    std::optional<Refusal> refuse(int status, QByteArray reason);

    qint64 m_maxBody;
    QByteArray m_header;
    qint64 m_bodyLeft = 0;
    qint64 m_bodyLength = 0; // of the request being read
    qint64 m_headerLength = 0; // of the request being read, once its header block is complete
    bool m_refused = false;
    quint64 m_requestsComplete = 0;
};

} // namespace cmcp
