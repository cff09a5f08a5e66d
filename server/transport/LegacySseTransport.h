#pragma once

#include "transport/HttpOptions.h"

#include <QHash>
#include <QObject>

#include <memory>

class QHttpServerRequest;
class QTcpSocket;

namespace cmcp {

class McpServer;

// The HTTP+SSE transport of protocol 2024-11-05, the URL the original Container-MCP documents:
// GET /sse opens the session's event stream and names, in an `endpoint` event, the URL to
// POST messages to (/messages?session_id=…); every reply travels on the stream.
class LegacySseTransport : public QObject
{
    Q_OBJECT
public:
    LegacySseTransport(McpServer &mcp, const HttpOptions &options, QObject *parent = nullptr);
    ~LegacySseTransport() override;

    void handle(const QHttpServerRequest &request, QTcpSocket *socket, const Principal &principal);

private:
    class Channel;
    void openStream(const QHttpServerRequest &request, QTcpSocket *socket,
                    const Principal &principal);
    void postMessage(const QHttpServerRequest &request, QTcpSocket *socket,
                     const Principal &principal);

    McpServer &m_mcp;
    const HttpOptions &m_options;
    QHash<QString, std::shared_ptr<Channel>> m_channels;
};

} // namespace cmcp
