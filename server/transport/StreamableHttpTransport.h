#pragma once

#include "mcp/JsonRpc.h"
#include "transport/HttpOptions.h"

#include <QHash>
#include <QObject>
#include <QTimer>

#include <memory>

class QHttpServerRequest;
class QTcpSocket;

namespace cmcp {

class McpServer;
class Session;

// MCP's Streamable HTTP transport at /mcp: POST carries client messages and is answered with
// JSON, or with an SSE stream when the server has something to say before the response.
// Both eras share the endpoint. In the 2025 revisions initialize opens a session (Mcp-Session-Id),
// GET opens its server-to-client stream and DELETE ends it. A POST of the modern era (its _meta
// or MCP-Protocol-Version names 2026-07-28 or later) is served statelessly: no session, headers
// checked against the body, and closing the response stream cancels the request.
class StreamableHttpTransport : public QObject
{
    Q_OBJECT
public:
    StreamableHttpTransport(McpServer &mcp, const HttpOptions &options, QObject *parent = nullptr);
    ~StreamableHttpTransport() override;

    void handle(const QHttpServerRequest &request, QTcpSocket *socket, const Principal &principal);

private:
    class Channel;
    void handlePost(const QHttpServerRequest &request, QTcpSocket *socket,
                    const Principal &principal);
    void handleGet(const QHttpServerRequest &request, QTcpSocket *socket,
                   const Principal &principal);
    void handleDelete(const QHttpServerRequest &request, QTcpSocket *socket,
                      const Principal &principal);
    // The session the request names; on a missing, unknown or mismatched session the error
    // response is written and null returned.
    // Only the principal that opened a session reaches it; to another, it does not exist.
    std::shared_ptr<Session> requestedSession(const QHttpServerRequest &request,
                                              const Principal &principal, QTcpSocket *socket,
                                              const QJsonValue &refusedId);
    bool protocolVersionAccepted(const QHttpServerRequest &request, QTcpSocket *socket,
                                 const QJsonValue &refusedId);
    // Whether a POST belongs to the modern era, served without a session.
    static bool isStatelessPost(const QHttpServerRequest &request, const jsonrpc::Payload &payload);
    void handleStatelessPost(const QHttpServerRequest &request, QTcpSocket *socket,
                             const Principal &principal, const jsonrpc::Payload &payload);
    void reapIdleSessions();

    McpServer &m_mcp;
    const HttpOptions &m_options;
    QHash<QString, std::shared_ptr<Channel>> m_channels;
    QTimer m_reaper;
};

} // namespace cmcp
