#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <optional>

namespace cmcp {

// Follows the request bytes of one HTTP/1.1 connection, request by request, before the HTTP
// parser reads them: where the headers end, how long each body is, and whether a limit is
// broken (body over the limit: 413, a chunked body that cannot be bounded: 411, a bad
// Content-Length: 400, headers over 64 KiB: 431). No socket: GuardedTcpServer feeds it what it
// peeks, and the fuzz target feeds it arbitrary bytes.
//
// A request whose first bytes are one of `streamedPrefixes` ("PUT /transfer/", "GET /ports/")
// has a body the daemon reads as a stream rather than through the HTTP parser: its length is the
// route's to judge, not MCP_MAX_BODY_MB's, and none of it is held. Once its headers are complete,
// feed() takes no more bytes until beginStreamedBody(); the body's bytes are then fed as they are
// read.
//
// A request with both Content-Length and a Transfer-Encoding is refused (400) on every route: the
// two framings disagree, and a server behind a proxy that reads the other one would see a second,
// smuggled request in the body.
class RequestFraming
{
public:
    static constexpr qint64 maxHeaderBytes = 64 * 1024;

    struct Refusal
    {
        int status = 0;
        QByteArray reason;
    };

    explicit RequestFraming(qint64 maxBodyBytes, QList<QByteArray> streamedPrefixes = {})
        : m_maxBody(maxBodyBytes),
          m_streamedPrefixes(std::move(streamedPrefixes))
    {
    }

    // The next bytes of the stream. A refusal is returned once; after it the stream is refused
    // and further bytes are ignored.
    std::optional<Refusal> feed(QByteArrayView fresh);

    bool refused() const { return m_refused; }
    qint64 bodyLeft() const { return m_bodyLeft; } // of the request being read
    // Bytes of the request being read that have arrived (its headers, its body so far): what
    // the HTTP parser holds for it until it is complete.
    qint64 bytesHeld() const
    {
        if (m_streamed)
            return 0; // read by the route as it goes
        return m_bodyLeft > 0 ? m_headerLength + m_bodyLength - m_bodyLeft : m_header.size();
    }
    qsizetype headerBytes() const { return m_header.size(); } // of the header block being read
    // Requests whose headers and whole body have arrived.
    quint64 requestsComplete() const { return m_requestsComplete; }

    // The request being read has begun as a streamed one, as far as its bytes go (`start`: its
    // first bytes when none have been fed yet).
    bool mayBeStreamed(QByteArrayView start = {}) const;
    // The headers of a streamed request are complete and its body is not being fed yet: the
    // header block, then beginStreamedBody().
    bool streamedHeadComplete() const { return m_streamedHeadComplete; }
    const QByteArray &streamedHead() const { return m_header; }
    void beginStreamedBody();

private:
    qsizetype findHeaderEnd(QByteArrayView fresh, qsizetype from) const;
    std::optional<Refusal> inspectHeader();
    bool startsStreamed(QByteArrayView begun) const;
    std::optional<Refusal> refuse(int status, QByteArray reason);

    qint64 m_maxBody;
    QByteArray m_header;
    qint64 m_bodyLeft = 0;
    qint64 m_bodyLength = 0; // of the request being read
    qint64 m_headerLength = 0; // of the request being read, once its header block is complete
    bool m_refused = false;
    quint64 m_requestsComplete = 0;
    const QList<QByteArray> m_streamedPrefixes;
    bool m_streamed = false; // the request being read is a streamed one
    bool m_streamedHeadComplete = false;
};

} // namespace cmcp
