#include "transport/SseStream.h"

#include <spdlog/spdlog.h>

namespace cmcp {

SseStream::SseStream(QTcpSocket *socket, int keepAliveSeconds, qint64 maxBuffer, QObject *parent)
    : QObject(parent),
      m_socket(socket),
      m_maxBuffer(maxBuffer)
{
    m_keepAlive.setInterval(keepAliveSeconds * 1000);
    connect(&m_keepAlive, &QTimer::timeout, this, [this] { writeChunk(": keep-alive\n\n"); });
    if (socket)
        connect(socket, &QTcpSocket::disconnected, this, &SseStream::onDisconnected);
}

SseStream::~SseStream()
{
    end();
}

void SseStream::start(const http::Headers &extraHeaders)
{
    if (!m_socket || m_started)
        return;
    m_started = true;
    QByteArray head = "HTTP/1.1 200 OK\r\n"
                      "Content-Type: text/event-stream\r\n"
                      "Cache-Control: no-cache, no-transform\r\n"
                      "X-Accel-Buffering: no\r\n"
                      "Transfer-Encoding: chunked\r\n";
    for (const auto &[name, value] : extraHeaders)
        head += name + ": " + value + "\r\n";
    head += "\r\n";
    http::setStreaming(m_socket, true);
    http::writeParts(m_socket, {head});
    m_keepAlive.start();
}

void SseStream::sendEvent(const QByteArray &data, const QByteArray &event, const QByteArray &id)
{
    QByteArray frame;
    frame.reserve(data.size() + id.size() + event.size() + 32);
    if (!id.isEmpty())
        frame += "id: " + id + '\n';
    if (!event.isEmpty())
        frame += "event: " + event + '\n';
    // Compact JSON has no raw newlines, but the framing must hold for any payload.
    qsizetype start = 0;
    for (;;) {
        const qsizetype end = data.indexOf('\n', start);
        frame += "data: ";
        frame += QByteArrayView(data).sliced(start, (end < 0 ? data.size() : end) - start);
        frame += '\n';
        if (end < 0)
            break;
        start = end + 1;
    }
    frame += '\n';
    writeChunk(frame);
}

void SseStream::sendRetry(int milliseconds)
{
    writeChunk("retry: " + QByteArray::number(milliseconds) + "\n\n");
}

void SseStream::writeChunk(const QByteArray &payload)
{
    if (!isOpen())
        return;
    // In parts: a large payload is not copied to join its chunk's framing.
    http::writeParts(m_socket, {QByteArray::number(payload.size(), 16) + "\r\n", payload, "\r\n"});
    m_keepAlive.start();
    if (m_socket->bytesToWrite() > m_maxBuffer) {
        spdlog::warn("dropping an SSE reader from {}: {} bytes unread exceed the {} byte bound",
                     m_socket->peerAddress().toString().toStdString(), m_socket->bytesToWrite(),
                     m_maxBuffer);
        m_socket->abort();
    }
}

void SseStream::end()
{
    if (!isOpen())
        return;
    http::setStreaming(m_socket, false);
    http::countResponse(m_socket);
    http::writeParts(m_socket, {"0\r\n\r\n"});
    m_ended = true;
    m_keepAlive.stop();
}

void SseStream::onDisconnected()
{
    m_keepAlive.stop();
    const bool wasOpen = m_started && !m_ended;
    m_ended = true;
    if (wasOpen)
        Q_EMIT closed();
}

} // namespace cmcp
