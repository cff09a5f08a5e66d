#pragma once

#include "mcp/Exchange.h"

#include <QByteArray>
#include <QObject>

#include <memory>

class QSocketNotifier;

namespace cmcp {

class McpServer;
class Session;

// MCP over stdin/stdout: one session, one JSON-RPC message (or batch) per line. stdout
// carries nothing but protocol; logs go to stderr. End of input ends the session.
class StdioTransport : public QObject, public SessionChannel
{
    Q_OBJECT
public:
    explicit StdioTransport(McpServer &mcp, QObject *parent = nullptr);
    ~StdioTransport() override;

    void start();
    void sendUnrelated(const QJsonObject &message) override;

Q_SIGNALS:
    void finished();

private:
    class LineExchange;
    void onReadable();
    void handleLine(const QByteArray &line);
    void writeLine(const QByteArray &json);

    // A line longer than this is refused rather than buffered without bound.
    static constexpr qsizetype maxLineBytes = 64 * 1024 * 1024;

    McpServer &m_mcp;
    std::shared_ptr<Session> m_session;
    std::shared_ptr<LineExchange> m_exchange;
    QSocketNotifier *m_notifier = nullptr;
    QByteArray m_buffer;
    bool m_discardingLongLine = false;
};

} // namespace cmcp
