#include "transport/ResumableStream.h"

#include "transport/SseStream.h"

namespace cmcp {

namespace {
// How long a client waits before reconnecting after the server closed the stream.
constexpr int retryMilliseconds = 500;
} // namespace

ResumableStream::ResumableStream(int id, const HttpOptions &options, QObject *parent)
    : QObject(parent),
      m_id(id),
      m_options(options)
{
}

ResumableStream::~ResumableStream() = default;

QByteArray ResumableStream::eventId(quint64 seq) const
{
    return QByteArray::number(m_id) + '_' + QByteArray::number(seq);
}

std::optional<QPair<int, quint64>> ResumableStream::parseEventId(const QByteArray &eventId)
{
    const QList<QByteArray> parts = eventId.trimmed().split('_');
    if (parts.size() != 2)
        return std::nullopt;
    bool idOk = false;
    bool seqOk = false;
    const int id = parts[0].toInt(&idOk);
    const quint64 seq = parts[1].toULongLong(&seqOk);
    if (!idOk || !seqOk)
        return std::nullopt;
    return QPair<int, quint64>{id, seq};
}

bool ResumableStream::attach(QTcpSocket *socket, const QByteArray &sessionId,
                             std::optional<quint64> afterSeq)
{
    const quint64 firstKept = m_events.isEmpty() ? m_nextSeq : m_events.first().first;
    if (afterSeq && *afterSeq + 1 < firstKept)
        return false;
    m_live = std::make_unique<SseStream>(socket, m_options.keepAliveSeconds,
                                         m_options.maxStreamBufferBytes);
    m_live->start({{"Mcp-Session-Id", sessionId}});
    m_live->sendRetry(retryMilliseconds);
    if (!afterSeq)
        m_live->sendEvent({}, {}, eventId(0)); // the priming event: an id to resume from
    for (const auto &[seq, data] : std::as_const(m_events)) {
        if (!afterSeq || seq > *afterSeq)
            write(seq, data);
    }
    if (m_finished)
        detach();
    return true;
}

void ResumableStream::send(const QByteArray &data)
{
    const quint64 seq = m_nextSeq++;
    m_events.append({seq, data});
    m_keptBytes += data.size();
    // Keep a bounded tail: a client away for too long cannot resume, and is told so.
    while (m_keptBytes > m_options.maxStreamBufferBytes && m_events.size() > 1) {
        m_keptBytes -= m_events.first().second.size();
        m_events.removeFirst();
    }
    write(seq, data);
}

void ResumableStream::write(quint64 seq, const QByteArray &data)
{
    if (m_live && m_live->isOpen())
        m_live->sendEvent(data, "message", eventId(seq));
}

void ResumableStream::detach()
{
    if (m_live)
        m_live->end();
    m_live.reset();
}

void ResumableStream::finish()
{
    m_finished = true;
    detach();
}

} // namespace cmcp
