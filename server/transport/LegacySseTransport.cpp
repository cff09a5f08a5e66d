#include "transport/LegacySseTransport.h"

#include "transport/HttpWire.h"
#include "mcp/JsonRpc.h"
#include "mcp/McpServer.h"
#include "transport/SseStream.h"

#include <QHttpServerRequest>
#include <QTcpSocket>
#include <QUrlQuery>

namespace cmcp {

namespace {
const QString transportName = QStringLiteral("sse");
}

// Everything the server says to a legacy SSE client goes down its one event stream.
class LegacySseTransport::Channel : public SessionChannel, public Exchange
{
public:
    explicit Channel(std::unique_ptr<SseStream> stream) : stream(std::move(stream)) { }

    void send(const QJsonValue &message)
    {
        if (stream->isOpen())
            stream->sendEvent(jsonrpc::serialize(message), "message");
    }
    void sendUnrelated(const QJsonObject &message) override { send(message); }
    void sendRelated(const QJsonObject &message) override { send(message); }
    void complete(const QJsonValue &responses) override
    {
        if (!responses.isUndefined())
            send(responses);
    }
    void completeSerialized(const QByteArray &responses) override
    {
        if (stream->isOpen())
            stream->sendEvent(responses, "message");
    }

    std::unique_ptr<SseStream> stream;
    std::shared_ptr<Session> session;
};

LegacySseTransport::LegacySseTransport(McpServer &mcp, const HttpOptions &options, QObject *parent)
    : QObject(parent),
      m_mcp(mcp),
      m_options(options)
{
    connect(&mcp, &McpServer::sessionClosed, this,
            [this](const QString &id) { m_channels.remove(id); });
}

LegacySseTransport::~LegacySseTransport()
{
    const QStringList ids = m_channels.keys();
    for (const QString &id : ids)
        m_mcp.closeSession(id, QStringLiteral("the SSE transport stopped"));
}

void LegacySseTransport::handle(const QHttpServerRequest &request, QTcpSocket *socket,
                                const Principal &principal)
{
    const bool streamPath = request.url().path() == QLatin1String("/sse");
    if (streamPath && request.method() == QHttpServerRequest::Method::Get)
        return openStream(request, socket, principal);
    if (!streamPath && request.method() == QHttpServerRequest::Method::Post)
        return postMessage(request, socket, principal);
    http::writeResponse(socket, 405, {{"Allow", streamPath ? "GET" : "POST"}}, {});
}

void LegacySseTransport::openStream(const QHttpServerRequest &, QTcpSocket *socket,
                                    const Principal &principal)
{
    auto stream = std::make_unique<SseStream>(socket, m_options.keepAliveSeconds,
                                              m_options.maxStreamBufferBytes);
    auto channel = std::make_shared<Channel>(std::move(stream));
    channel->session = m_mcp.openSession(transportName, channel.get(), principal);
    if (!channel->session) {
        http::writeJsonRpcError(
                socket, 503, jsonrpc::RequestFailed,
                QStringLiteral("too many sessions (MCP_MAX_SESSIONS): try again later"));
        return;
    }
    const QString id = channel->session->id();
    m_channels.insert(id, channel);
    // The stream is the session: when the client goes, so does the session.
    connect(channel->stream.get(), &SseStream::closed, this, [this, id] {
        QMetaObject::invokeMethod(
                this,
                [this, id] { m_mcp.closeSession(id, QStringLiteral("the SSE stream closed")); },
                Qt::QueuedConnection);
    });
    channel->stream->start();
    channel->stream->sendEvent("/messages?session_id=" + id.toLatin1(), "endpoint");
}

void LegacySseTransport::postMessage(const QHttpServerRequest &request, QTcpSocket *socket,
                                     const Principal &principal)
{
    const QUrlQuery query = request.query();
    QString id = query.queryItemValue(QStringLiteral("session_id"));
    if (id.isEmpty())
        id = query.queryItemValue(QStringLiteral("sessionId"));
    if (id.isEmpty()) {
        http::writeJsonRpcError(socket, 400, jsonrpc::InvalidRequest,
                                QStringLiteral("the session_id query parameter is required (from "
                                               "the endpoint event of /sse)"));
        return;
    }
    const std::shared_ptr<Channel> channel = m_channels.value(id);
    if (!channel || channel->session->principal() != principal) {
        http::writeJsonRpcError(socket, 404, jsonrpc::RequestFailed,
                                QStringLiteral("session not found: open a new stream at /sse"));
        return;
    }
    if (!request.value("content-type").toLower().startsWith("application/json")) {
        http::writeJsonRpcError(socket, 415, jsonrpc::InvalidRequest,
                                QStringLiteral("the Content-Type must be application/json"));
        return;
    }
    const jsonrpc::Payload payload = jsonrpc::parsePayload(request.body());
    if (payload.parseError) {
        http::writeJsonRpcError(socket, 400, jsonrpc::ParseError,
                                QStringLiteral("parse error: %1").arg(payload.parseErrorText));
        return;
    }
    // Accepted before handling: every reply travels on the event stream, not in this response.
    http::writeResponse(socket, 202, {{"Content-Type", "text/plain"}}, "Accepted");
    m_mcp.handlePayload(channel->session, payload, channel);
}

} // namespace cmcp
