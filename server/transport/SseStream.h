#pragma once

#include "transport/HttpWire.h"

#include <QObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

namespace cmcp {

// A Server-Sent Events response on a kept socket, framed with chunked transfer encoding so
// that the connection survives the end of the stream. Sends keep-alive comments while idle
// and drops a reader that lets more than `maxBuffer` bytes pile up unread.
class SseStream : public QObject
{
    Q_OBJECT
public:
    SseStream(QTcpSocket *socket, int keepAliveSeconds, qint64 maxBuffer,
              QObject *parent = nullptr);
    ~SseStream() override;

    void start(const http::Headers &extraHeaders = {});
    void sendEvent(const QByteArray &data, const QByteArray &event = {}, const QByteArray &id = {});
    void sendRetry(int milliseconds);
    // Ends the stream cleanly; the connection stays open for the next request.
    void end();
    bool isOpen() const { return m_socket && m_started && !m_ended; }

Q_SIGNALS:
    // The client went away or was dropped; not emitted after end().
    void closed();

private:
    void writeChunk(const QByteArray &payload);
    void onDisconnected();

    QPointer<QTcpSocket> m_socket;
    QTimer m_keepAlive;
    qint64 m_maxBuffer;
    bool m_started = false;
    bool m_ended = false;
};

} // namespace cmcp
