#include "transport/StreamableHttpTransport.h"

#include "transport/HttpWire.h"
#include "mcp/JsonRpc.h"
#include "mcp/McpServer.h"
#include "mcp/ProtocolVersion.h"
#include "mcp/RequestMeta.h"
#include "transport/MirroredHeaders.h"
#include "base/ReplicaHandle.h"
#include "transport/ResumableStream.h"
#include "transport/SseStream.h"

#include <QHttpServerRequest>
#include <QMap>
#include <QPointer>
#include <QTcpSocket>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

const QString transportName = QStringLiteral("streamable-http");

bool accepts(const QHttpServerRequest &request, QByteArrayView mediaType)
{
    const QByteArray accept = request.value("accept");
    for (const QByteArray &part : accept.split(',')) {
        const QByteArray type = part.split(';').first().trimmed().toLower();
        if (type == mediaType || type == "*/*")
            return true;
    }
    return false;
}

// The id an HTTP-level refusal of `payload` carries: its request's, when it has one to read.
QJsonValue idToEcho(const jsonrpc::Payload &payload)
{
    if (payload.parseError || payload.batch || payload.messages.size() != 1)
        return QJsonValue::Undefined;
    const QJsonValue id = payload.messages.first().id;
    return id.isString() || id.isDouble() ? id : QJsonValue(QJsonValue::Undefined);
}

using OpenResumable = std::function<std::shared_ptr<ResumableStream>()>;

// The answer to one POST: plain JSON when the response is all there is, an SSE stream as
// soon as a notification or a server request has to go out before it. For sessions that
// negotiated 2025-11-25 the stream is resumable.
class PostExchange : public Exchange
{
public:
    PostExchange(QTcpSocket *socket, const QString &sessionId, const HttpOptions &options,
                 OpenResumable openResumable, http::Delivery delivery = http::Delivery::Buffered)
        : m_socket(socket),
          m_sessionHeader(sessionId.toLatin1()),
          m_options(options),
          m_openResumable(std::move(openResumable)),
          m_delivery(delivery)
    {
    }

    void sendRelated(const QJsonObject &message) override
    {
        ensureStream();
        send(jsonrpc::serialize(message));
    }

    void suspend() override
    {
        ensureStream();
        if (m_resumable)
            m_resumable->detach();
    }

    void complete(const QJsonValue &responses) override
    {
        if (responses.isUndefined()) {
            finish(nullptr, 200);
            return;
        }
        const QJsonObject error = responses.toObject().value(QLatin1String("error")).toObject();
        const int code = error.value(QLatin1String("code")).toInt();
        const QByteArray json = jsonrpc::serialize(responses);
        // A call over its principal's rate: 429 with the wait, which HTTP clients and proxies
        // understand without reading the body (whole seconds, rounded up).
        if (code == jsonrpc::RateLimited) {
            const qint64 waitMs = qint64(error.value(QLatin1String("data"))
                                                 .toObject()
                                                 .value(QLatin1String("retryAfterMs"))
                                                 .toDouble());
            finish(&json, 429,
                   {{"Retry-After", QByteArray::number(qMax<qint64>(1, (waitMs + 999) / 1000))}});
            return;
        }
        finish(&json, httpStatus(code));
    }

    // Serialized responses are results of tool calls, never an error.
    void completeSerialized(const QByteArray &responses) override { finish(&responses, 200); }

private:
    bool stateless() const { return m_sessionHeader.isEmpty(); }

    // A stateless answer names the replica that gave it, so that a balancer learns where the
    // handles it makes live (server/base/ReplicaHandle.h); a session's requests follow its id.
    http::Headers headers() const
    {
        if (!stateless())
            return {{"Mcp-Session-Id", m_sessionHeader}};
        if (replicaId().isEmpty())
            return {};
        return {{"Mcp-Replica", replicaId().toLatin1()}};
    }

    // The HTTP status of an answer that is an error with `code` (0: none). The modern era wants
    // its protocol errors and unknown methods told apart on the HTTP level too.
    int httpStatus(int code) const
    {
        if (code == jsonrpc::ParseError)
            return 400;
        if (!stateless())
            return 200;
        if (code == jsonrpc::MethodNotFound)
            return 404;
        if (code == jsonrpc::HeaderMismatch || code == jsonrpc::MissingRequiredClientCapability
            || code == jsonrpc::UnsupportedProtocolVersion)
            return 400;
        return 200;
    }

    void finish(const QByteArray *responses, int status, const http::Headers &extra = {})
    {
        if (m_resumable) {
            if (responses)
                m_resumable->send(*responses);
            m_resumable->finish();
            return;
        }
        if (m_stream) {
            if (responses)
                m_stream->sendEvent(*responses, "message");
            m_stream->end();
            return;
        }
        if (!responses) {
            // Every request was cancelled, so nothing is to be said; but a POST holding requests
            // must be answered with JSON or a stream: an empty stream it is.
            SseStream empty(m_socket, m_options.keepAliveSeconds, m_options.maxStreamBufferBytes);
            empty.start(headers());
            empty.end();
            return;
        }
        http::writeJson(m_socket, status, *responses, headers() + extra, m_delivery);
    }

    void ensureStream()
    {
        if (m_resumable || m_stream)
            return;
        if (m_openResumable) {
            m_resumable = m_openResumable();
            m_resumable->attach(m_socket, m_sessionHeader, std::nullopt);
            return;
        }
        m_stream = std::make_unique<SseStream>(m_socket, m_options.keepAliveSeconds,
                                               m_options.maxStreamBufferBytes);
        m_stream->start(headers());
    }

    void send(const QByteArray &data)
    {
        if (m_resumable)
            m_resumable->send(data);
        else
            m_stream->sendEvent(data, "message");
    }

    QPointer<QTcpSocket> m_socket;
    QByteArray m_sessionHeader;
    const HttpOptions &m_options;
    OpenResumable m_openResumable;
    // How a JSON answer leaves (http::Delivery): straight for initialize's, which comes once.
    const http::Delivery m_delivery;
    std::shared_ptr<ResumableStream> m_resumable;
    std::unique_ptr<SseStream> m_stream;
};

} // namespace

// A session's own channel: its GET stream, when the client has one open.
class StreamableHttpTransport::Channel : public SessionChannel
{
public:
    void sendUnrelated(const QJsonObject &message) override
    {
        if (getStream && getStream->isOpen())
            getStream->sendEvent(jsonrpc::serialize(message), "message");
        else
            spdlog::debug("no GET stream open: dropped {}",
                          message.value(QLatin1String("method")).toString().toStdString());
    }

    // Opens a resumable stream, kept for resumption while it runs and for a while after.
    std::shared_ptr<ResumableStream> openResumable(const HttpOptions &options)
    {
        auto stream = std::make_shared<ResumableStream>(nextStreamId++, options);
        streams.insert(stream->id(), stream);
        // Finished streams beyond the newest few are forgotten.
        constexpr int keptFinished = 16;
        int finished = 0;
        for (auto it = streams.end(); it != streams.begin();) {
            --it;
            if (it.value()->isFinished() && ++finished > keptFinished)
                it = streams.erase(it);
        }
        return stream;
    }

    std::shared_ptr<Session> session;
    std::unique_ptr<SseStream> getStream;
    QMap<int, std::shared_ptr<ResumableStream>> streams;
    int nextStreamId = 1;
};

StreamableHttpTransport::StreamableHttpTransport(McpServer &mcp, const HttpOptions &options,
                                                 QObject *parent)
    : QObject(parent),
      m_mcp(mcp),
      m_options(options)
{
    connect(&mcp, &McpServer::sessionClosed, this,
            [this](const QString &id) { m_channels.remove(id); });
    m_reaper.setInterval(qBound(1, m_options.sessionIdleSeconds / 4, 60) * 1000);
    connect(&m_reaper, &QTimer::timeout, this, &StreamableHttpTransport::reapIdleSessions);
    m_reaper.start();
}

StreamableHttpTransport::~StreamableHttpTransport()
{
    const QStringList ids = m_channels.keys();
    for (const QString &id : ids)
        m_mcp.closeSession(id, QStringLiteral("the HTTP transport stopped"));
}

void StreamableHttpTransport::handle(const QHttpServerRequest &request, QTcpSocket *socket,
                                     const Principal &principal)
{
    const QString version = QString::fromLatin1(request.value("mcp-protocol-version"));
    if (request.method() != QHttpServerRequest::Method::Post && protocol::isModern(version)) {
        // The modern era has neither a server-to-client stream nor sessions to end.
        http::writeJsonRpcError(socket, 405, jsonrpc::InvalidRequest,
                                QStringLiteral("protocol revision %1 takes only POST at this "
                                               "endpoint")
                                        .arg(version),
                                {{"Allow", "POST"}});
        return;
    }
    switch (request.method()) {
    case QHttpServerRequest::Method::Post:
        return handlePost(request, socket, principal);
    case QHttpServerRequest::Method::Get:
        return handleGet(request, socket, principal);
    case QHttpServerRequest::Method::Delete:
        return handleDelete(request, socket, principal);
    default:
        http::writeResponse(socket, 405, {{"Allow", "GET, POST, DELETE"}}, {});
    }
}

bool StreamableHttpTransport::protocolVersionAccepted(const QHttpServerRequest &request,
                                                      QTcpSocket *socket,
                                                      const QJsonValue &refusedId)
{
    const QByteArray version = request.value("mcp-protocol-version");
    if (version.isEmpty() || protocol::isSupported(QString::fromLatin1(version)))
        return true;
    http::writeJsonRpcError(socket, 400, jsonrpc::InvalidRequest,
                            QStringLiteral("unsupported MCP-Protocol-Version '%1' (supported: %2)")
                                    .arg(QString::fromLatin1(version),
                                         protocol::supportedVersions().join(QLatin1String(", "))),
                            {}, refusedId);
    return false;
}

std::shared_ptr<Session>
StreamableHttpTransport::requestedSession(const QHttpServerRequest &request,
                                          const Principal &principal, QTcpSocket *socket,
                                          const QJsonValue &refusedId)
{
    const QString id = QString::fromLatin1(request.value("mcp-session-id"));
    if (id.isEmpty()) {
        http::writeJsonRpcError(
                socket, 400, jsonrpc::RequestFailed,
                QStringLiteral("the Mcp-Session-Id header is required: send initialize first"), {},
                refusedId);
        return nullptr;
    }
    const auto channel = m_channels.value(id);
    if (!channel || channel->session->principal() != principal) {
        http::writeJsonRpcError(
                socket, 404, jsonrpc::RequestFailed,
                QStringLiteral(
                        "session not found (it ended or never existed): initialize a new one"),
                {}, refusedId);
        return nullptr;
    }
    return channel->session;
}

void StreamableHttpTransport::handlePost(const QHttpServerRequest &request, QTcpSocket *socket,
                                         const Principal &principal)
{
    const jsonrpc::Payload payload = jsonrpc::parsePayload(request.body());
    const QJsonValue refusedId = idToEcho(payload);
    if (!accepts(request, "application/json") || !accepts(request, "text/event-stream")) {
        http::writeJsonRpcError(
                socket, 406, jsonrpc::InvalidRequest,
                QStringLiteral(
                        "the Accept header must list both application/json and text/event-stream"),
                {}, refusedId);
        return;
    }
    if (!request.value("content-type").toLower().startsWith("application/json")) {
        http::writeJsonRpcError(socket, 415, jsonrpc::InvalidRequest,
                                QStringLiteral("the Content-Type must be application/json"), {},
                                refusedId);
        return;
    }
    if (isStatelessPost(request, payload))
        return handleStatelessPost(request, socket, principal, payload);
    const bool isInitialize = !payload.parseError && !payload.batch && payload.messages.size() == 1
            && payload.messages.first().method == QLatin1String("initialize");

    std::shared_ptr<Session> session;
    if (isInitialize) {
        if (!request.value("mcp-session-id").isEmpty()) {
            http::writeJsonRpcError(
                    socket, 400, jsonrpc::InvalidRequest,
                    QStringLiteral(
                            "initialize opens a new session: send it without Mcp-Session-Id"),
                    {}, refusedId);
            return;
        }
        auto channel = std::make_shared<Channel>();
        channel->session = m_mcp.openSession(transportName, channel.get(), principal);
        if (!channel->session) {
            http::writeJsonRpcError(
                    socket, 503, jsonrpc::RequestFailed,
                    QStringLiteral("too many sessions (MCP_MAX_SESSIONS): try again later"), {},
                    refusedId);
            return;
        }
        session = channel->session;
        m_channels.insert(session->id(), channel);
    } else {
        if (!protocolVersionAccepted(request, socket, refusedId))
            return;
        session = requestedSession(request, principal, socket, refusedId);
        if (!session)
            return;
    }

    OpenResumable openResumable;
    if (protocol::atLeast(session->protocolVersion(), protocol::V2025_11_25)) {
        std::weak_ptr<Channel> channel = m_channels.value(session->id());
        openResumable = [channel, this] {
            auto alive = channel.lock();
            return alive ? alive->openResumable(m_options)
                         : std::make_shared<ResumableStream>(0, m_options);
        };
    }
    auto exchange = std::make_shared<PostExchange>(
            socket, session->id(), m_options, std::move(openResumable),
            isInitialize ? http::Delivery::Straight : http::Delivery::Buffered);
    if (!m_mcp.handlePayload(session, payload, exchange))
        http::writeResponse(socket, 202, {}, {}, false, http::Delivery::Straight);
    // A failed initialize leaves no session behind.
    if (isInitialize && !session->isInitialized())
        m_mcp.closeSession(session->id(), QStringLiteral("initialize failed"));
}

bool StreamableHttpTransport::isStatelessPost(const QHttpServerRequest &request,
                                              const jsonrpc::Payload &payload)
{
    const bool single = !payload.parseError && !payload.batch && payload.messages.size() == 1;
    if (single && isStatelessRequest(payload.messages.first()))
        return true;
    // initialize without the modern _meta opens a 2025 session, whatever the header says.
    if (single && payload.messages.first().method == QLatin1String("initialize"))
        return false;
    const QString version = QString::fromLatin1(request.value("mcp-protocol-version").trimmed());
    if (protocol::isModern(version))
        return true;
    // A version neither era knows, outside any session: the modern era says which exist.
    return request.value("mcp-session-id").isEmpty() && !version.isEmpty()
            && !protocol::isSupported(version);
}

void StreamableHttpTransport::handleStatelessPost(const QHttpServerRequest &request,
                                                  QTcpSocket *socket, const Principal &principal,
                                                  const jsonrpc::Payload &payload)
{
    const QJsonValue refusedId = idToEcho(payload);
    auto refuse = [&](int status, const RequestRejection &rejection) {
        http::writeJson(socket, status,
                        jsonrpc::serialize(rejectionResponse(refusedId, rejection)));
    };
    if (payload.parseError)
        return refuse(400,
                      {jsonrpc::ParseError,
                       QStringLiteral("parse error: %1").arg(payload.parseErrorText)});
    if (payload.batch)
        return refuse(400,
                      {jsonrpc::InvalidRequest,
                       QStringLiteral("JSON-RPC batches are not part of protocol revision %1")
                               .arg(protocol::modernVersions().first())});
    const jsonrpc::Message &message = payload.messages.first();
    switch (message.kind) {
    case jsonrpc::MessageKind::Invalid:
        return refuse(400,
                      {jsonrpc::InvalidRequest,
                       QStringLiteral("invalid request: %1").arg(message.invalidReason)});
    case jsonrpc::MessageKind::Response:
        return refuse(400,
                      {jsonrpc::InvalidRequest,
                       QStringLiteral("protocol revision %1 has no requests from server to "
                                      "client, so no responses to them")
                               .arg(protocol::modernVersions().first())});
    case jsonrpc::MessageKind::Notification:
        // The modern era defines none over HTTP (closing a stream is how a request is
        // cancelled): accepted and ignored, as unknown notifications always are.
        http::writeResponse(socket, 202, {}, {});
        return;
    case jsonrpc::MessageKind::Request:
        break;
    }
    const auto meta = readRequestMeta(message.params);
    if (const auto *rejection = std::get_if<RequestRejection>(&meta))
        return refuse(400, *rejection);
    const RequestMeta &read = std::get<RequestMeta>(meta);
    if (const auto rejection =
                mirroredHeadersMismatch(request, message, read.protocolVersion, m_mcp.tools()))
        return refuse(400, *rejection);
    if (!protocol::isModern(read.protocolVersion))
        return refuse(400, unsupportedVersion(read.protocolVersion));

    auto exchange = std::make_shared<PostExchange>(socket, QString(), m_options, nullptr);
    const std::shared_ptr<Session> served =
            m_mcp.serveStateless(message, read, exchange, transportName, principal);
    // A client that closes the connection before the answer has given up on it: that is how
    // the modern era cancels. The connection goes with the session once it is answered.
    connect(socket, &QTcpSocket::disconnected, served.get(), [session = served.get()] {
        session->close(QStringLiteral("the client closed the response stream"));
    });
}

void StreamableHttpTransport::handleGet(const QHttpServerRequest &request, QTcpSocket *socket,
                                        const Principal &principal)
{
    if (!accepts(request, "text/event-stream")) {
        http::writeJsonRpcError(socket, 406, jsonrpc::InvalidRequest,
                                QStringLiteral("the Accept header must list text/event-stream"));
        return;
    }
    if (!protocolVersionAccepted(request, socket, QJsonValue::Undefined))
        return;
    const std::shared_ptr<Session> session =
            requestedSession(request, principal, socket, QJsonValue::Undefined);
    if (!session)
        return;
    const std::shared_ptr<Channel> channel = m_channels.value(session->id());
    const QByteArray lastEventId = request.value("last-event-id");
    if (!lastEventId.isEmpty()) {
        const auto position = ResumableStream::parseEventId(lastEventId);
        const auto stream = position ? channel->streams.value(position->first) : nullptr;
        if (!stream || !stream->attach(socket, session->id().toLatin1(), position->second))
            http::writeJsonRpcError(
                    socket, 404, jsonrpc::InvalidRequest,
                    QStringLiteral("cannot resume after event '%1': unknown, or no longer kept")
                            .arg(QString::fromLatin1(lastEventId)));
        return;
    }
    if (channel->getStream && channel->getStream->isOpen()) {
        http::writeJsonRpcError(socket, 409, jsonrpc::InvalidRequest,
                                QStringLiteral("this session already has a GET stream open"));
        return;
    }
    channel->getStream = std::make_unique<SseStream>(socket, m_options.keepAliveSeconds,
                                                     m_options.maxStreamBufferBytes);
    channel->getStream->start({{"Mcp-Session-Id", session->id().toLatin1()}});
    session->touch();
}

void StreamableHttpTransport::handleDelete(const QHttpServerRequest &request, QTcpSocket *socket,
                                           const Principal &principal)
{
    if (!protocolVersionAccepted(request, socket, QJsonValue::Undefined))
        return;
    const std::shared_ptr<Session> session =
            requestedSession(request, principal, socket, QJsonValue::Undefined);
    if (!session)
        return;
    m_mcp.closeSession(session->id(), QStringLiteral("the client ended the session"));
    http::writeResponse(socket, 200, {}, {});
}

void StreamableHttpTransport::reapIdleSessions()
{
    const qint64 limit = qint64(m_options.sessionIdleSeconds) * 1000;
    QStringList idle;
    for (const auto &channel : std::as_const(m_channels)) {
        const bool streaming = channel->getStream && channel->getStream->isOpen();
        if (!streaming && channel->session->requestsInFlight() == 0
            && channel->session->idleMilliseconds() > limit)
            idle.append(channel->session->id());
    }
    for (const QString &id : std::as_const(idle))
        m_mcp.closeSession(id,
                           QStringLiteral("idle for more than %1 s (MCP_SESSION_IDLE_SECONDS)")
                                   .arg(m_options.sessionIdleSeconds));
}

} // namespace cmcp
