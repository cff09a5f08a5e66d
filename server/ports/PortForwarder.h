#pragma once

#include "ports/PublishedPorts.h"
#include "posix/UniqueFd.h"
#include "transport/RequestHead.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <memory>

class QTcpSocket;

namespace cmcp {

// One client connection forwarded to a published port: the client's request (its head
// rewritten by ProxiedHeads, its body streamed as it arrives) goes to the job's server over a
// socket made inside the job's network namespace (NamespaceConnect), and the answer comes back
// as the server sends it, so streamed bodies and server-sent events flow. A WebSocket upgrade
// the server accepts turns the connection into a raw relay both ways. One request per
// connection: both close after the answer.
//
// Bounded per connection: the response head (64 KiB, else 502), the bytes both ways together
// (PORTS_MAX_MB, then both are cut), the time with no byte either way (PORTS_IDLE_SECONDS), and
// what waits unsent for a slow side (reading from the other stops meanwhile). The port's end
// (revoked, expired, its job gone) closes the connection at once. Lives as a child of the
// client's socket.
class PortForwarder : public QObject
{
public:
    // Takes `client`, whose request head is `head` and whose remaining bytes (the body, or
    // frames after an upgrade) are still in the socket; `target` is the request target for the
    // job's server ("/" and what followed the token). The port's connection count is the
    // caller's to have checked.
    PortForwarder(QTcpSocket *client, RequestHead head, QByteArray target,
                  std::shared_ptr<PublishedPorts::Port> port, PublishedPorts &ports);
    ~PortForwarder() override;

    // Connects to the job's server; a refusal answers 502.
    void start();

private:
    void connected(UniqueFd socket, const QString &error);
    void relayClient();
    void relayUpstream();
    bool parseResponseHead();
    // Answers the client with an error of the proxy's own (before any byte of the server's
    // answer went out) and closes.
    void fail(int status, const QString &why);
    void closeBoth();
    void finishWhenDrained();
    bool withinByteBound(qint64 more);

    QPointer<QTcpSocket> m_client;
    QTcpSocket *m_upstream = nullptr;
    const RequestHead m_head;
    const QByteArray m_target;
    const QByteArray m_publicPrefix;
    const std::shared_ptr<PublishedPorts::Port> m_port;
    const qint64 m_maxBytes;
    const int m_idleMs;
    const bool m_upgradeAsked;
    qint64 m_bodyLeft = 0; // of the client's request, still to forward
    QByteArray m_responseHead; // until complete
    bool m_responseStarted = false;
    bool m_upgraded = false;
    bool m_upstreamEnded = false;
    bool m_closing = false;
    qint64 m_bytes = 0; // both ways
    QTimer m_idle;
};

} // namespace cmcp
