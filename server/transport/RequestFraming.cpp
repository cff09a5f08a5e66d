#include "transport/RequestFraming.h"

#include <QList>

#include <algorithm>

namespace cmcp {

std::optional<RequestFraming::Refusal> RequestFraming::feed(QByteArrayView fresh)
{
    qsizetype at = 0;
    while (at < fresh.size() && !m_refused && !m_streamedHeadComplete) {
        if (m_bodyLeft > 0) {
            const qint64 take = qMin<qint64>(m_bodyLeft, fresh.size() - at);
            m_bodyLeft -= take;
            at += take;
            if (m_bodyLeft == 0) {
                m_streamed = false;
                ++m_requestsComplete;
            }
            continue;
        }
        const qsizetype end = findHeaderEnd(fresh, at);
        if (end < 0) {
            m_header += fresh.sliced(at);
            if (m_header.size() > maxHeaderBytes)
                return refuse(431, "the request headers exceed 64 KiB");
            return std::nullopt;
        }
        m_header += fresh.sliced(at, end - at);
        at = end;
        if (std::optional<Refusal> refusal = inspectHeader())
            return refusal;
        if (m_streamed) {
            m_streamedHeadComplete = true; // kept until the body begins
            return std::nullopt;
        }
        m_header.clear();
        if (m_bodyLeft == 0)
            ++m_requestsComplete;
    }
    return std::nullopt;
}

bool RequestFraming::mayBeStreamed(QByteArrayView start) const
{
    if (m_streamedPrefixes.isEmpty() || m_bodyLeft > 0)
        return false;
    const QByteArrayView begun = m_header.isEmpty() ? start : QByteArrayView(m_header);
    for (const QByteArray &prefix : m_streamedPrefixes) {
        const qsizetype compared = qMin(begun.size(), prefix.size());
        if (compared > 0 && begun.first(compared) == QByteArrayView(prefix).first(compared))
            return true;
    }
    return false;
}

bool RequestFraming::startsStreamed(QByteArrayView begun) const
{
    return std::any_of(m_streamedPrefixes.begin(), m_streamedPrefixes.end(),
                       [begun](const QByteArray &prefix) { return begun.startsWith(prefix); });
}

void RequestFraming::beginStreamedBody()
{
    m_streamedHeadComplete = false;
    m_header.clear();
    if (m_bodyLeft == 0) {
        m_streamed = false;
        ++m_requestsComplete;
    }
}

// Finds the end of the header block, also when "\r\n\r\n" straddles two reads.
qsizetype RequestFraming::findHeaderEnd(QByteArrayView fresh, qsizetype from) const
{
    const QByteArray tail = m_header.right(3);
    const QByteArray joined = tail + fresh.sliced(from).toByteArray();
    const qsizetype found = joined.indexOf("\r\n\r\n");
    if (found < 0)
        return -1;
    return from + found + 4 - tail.size();
}

std::optional<RequestFraming::Refusal> RequestFraming::inspectHeader()
{
    qint64 length = 0;
    bool lengthGiven = false;
    bool encodingGiven = false;
    for (const QByteArray &line : m_header.split('\n')) {
        const qsizetype colon = line.indexOf(':');
        if (colon < 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length") {
            bool ok = false;
            length = value.toLongLong(&ok);
            if (!ok || length < 0)
                return refuse(400, "the Content-Length header is not a number");
            lengthGiven = true;
        } else if (name == "transfer-encoding") {
            encodingGiven = true;
        }
    }
    if (lengthGiven && encodingGiven)
        return refuse(400,
                      "a request may not carry both Content-Length and Transfer-Encoding: they "
                      "frame its body in two ways");
    if (encodingGiven)
        return refuse(411, "chunked request bodies are not accepted: send a Content-Length");
    m_streamed = startsStreamed(m_header);
    if (length > m_maxBody && !m_streamed)
        return refuse(413,
                      QByteArray("the request body of ") + QByteArray::number(length)
                              + " bytes exceeds the limit of " + QByteArray::number(m_maxBody)
                              + " bytes (MCP_MAX_BODY_MB)");
    m_bodyLeft = length;
    m_bodyLength = length;
    m_headerLength = m_header.size();
    return std::nullopt;
}

std::optional<RequestFraming::Refusal> RequestFraming::refuse(int status, QByteArray reason)
{
    m_refused = true;
    return Refusal{status, std::move(reason)};
}

} // namespace cmcp
