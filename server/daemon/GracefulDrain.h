#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <functional>

namespace cmcp {

class McpServer;

// A shutdown that lets running calls finish. On the first SIGTERM or SIGINT the server takes
// no new requests (HTTP answers 503 with Retry-After, /health says "draining"; stdio gets a
// JSON-RPC error), the calls in flight run on for at most `bound`, and once they are answered
// and the answers have left, `quit` is called. A second signal quits at once.
class GracefulDrain : public QObject
{
    Q_OBJECT
public:
    // `unsentBytes`: what the transport still has to send (0 for stdio, whose writes block).
    GracefulDrain(McpServer &mcp, int boundMs, std::function<qint64()> unsentBytes,
                  std::function<void()> quit, QObject *parent = nullptr);

    void onSignal(int signal);

private:
    void check();

    McpServer &m_mcp;
    const int m_boundMs;
    const std::function<qint64()> m_unsentBytes;
    const std::function<void()> m_quit;
    QTimer m_poll;
    QElapsedTimer m_since;
};

} // namespace cmcp
