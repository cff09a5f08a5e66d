#include "mcp/McpServer.h"

#include "mcp/ProtocolVersion.h"
#include "mcp/SchemaValidator.h"
#include "mcp/methods/JsonFields.h"
#include "base/UnguessableId.h"

#include <QJsonArray>
#include <QSet>

#include <spdlog/spdlog.h>

namespace cmcp {

void McpServer::Request::reply(const QJsonValue &result) const
{
    if (session->isStateless() && result.isObject()) {
        QJsonObject decorated = result.toObject();
        insertCacheHints(decorated, method);
        session->settleRequest(key, serial, jsonrpc::makeResult(id, decorated));
        return;
    }
    session->settleRequest(key, serial, jsonrpc::makeResult(id, result));
}

void McpServer::Request::fail(int code, const QString &message, const QJsonValue &data) const
{
    session->settleRequest(key, serial, jsonrpc::makeError(id, code, message, data));
}

McpServer::McpServer(ServerIdentity identity, QObject *parent)
    : QObject(parent),
      m_identity(std::move(identity))
{
    addLifecycleMethods();
    addToolMethods();
    addResourceMethods();
    addPromptMethods();
    addCompletionMethods();
    addTaskMethods();
    addListenMethods();

    connect(&m_tools, &ToolRegistry::changed, this, [this] {
        broadcast(QStringLiteral("notifications/tools/list_changed"));
        m_subscriptions.listChanged(Subscriptions::ListKind::Tools);
    });
    connect(&m_resources, &ResourceRegistry::listChanged, this, [this] {
        broadcast(QStringLiteral("notifications/resources/list_changed"));
        m_subscriptions.listChanged(Subscriptions::ListKind::Resources);
    });
    connect(&m_prompts, &PromptRegistry::listChanged, this, [this] {
        broadcast(QStringLiteral("notifications/prompts/list_changed"));
        m_subscriptions.listChanged(Subscriptions::ListKind::Prompts);
    });
    connect(&m_resources, &ResourceRegistry::updated, this,
            [this](const QString &uri, const QString &owner) {
                m_subscriptions.resourceUpdated(uri, owner);
                for (const auto &session : std::as_const(m_sessions)) {
                    if (session->subscriptions().contains(uri)
                        && (owner.isEmpty() || session->id() == owner))
                        session->sendUnrelated(jsonrpc::makeNotification(
                                QStringLiteral("notifications/resources/updated"),
                                {{QLatin1String("uri"), uri}}));
                }
            });
}

void McpServer::addLifecycleMethods()
{
    addMethod(QStringLiteral("initialize"), &McpServer::initialize,
              schema(R"({"type":"object","required":["protocolVersion","capabilities","clientInfo"],
            "properties":{"protocolVersion":{"type":"string"},"capabilities":{"type":"object"},
            "clientInfo":{"type":"object","required":["name"],"properties":{
              "name":{"type":"string","maxLength":256,"pattern":"^[^\\x00-\\x1f\\x7f]*$"},
              "version":{"type":"string","maxLength":256,"pattern":"^[^\\x00-\\x1f\\x7f]*$"}}}}})"),
              Era::Sessions);
    addMethod(QStringLiteral("ping"), &McpServer::ping, {}, Era::Sessions);
    addMethod(QStringLiteral("logging/setLevel"), &McpServer::setLogLevel,
              schema(R"({"type":"object","required":["level"],"properties":{"level":
            {"enum":["debug","info","notice","warning","error","critical","alert","emergency"]}}})"),
              Era::Sessions);
    addMethod(QStringLiteral("server/discover"), &McpServer::discover, {}, Era::Modern);
}

void McpServer::addMethod(const QString &name, Handler handler, QJsonObject paramsSchema, Era era)
{
    if (era != Era::Modern)
        m_methods.insert(name, {handler, paramsSchema});
    if (era != Era::Sessions)
        m_statelessMethods.insert(name, {handler, std::move(paramsSchema)});
}

McpServer::~McpServer()
{
    for (const auto &session : std::as_const(m_sessions))
        session->close(QStringLiteral("the server is shutting down"));
    const auto stateless = m_statelessInFlight;
    for (const auto &session : stateless)
        session->close(QStringLiteral("the server is shutting down"));
}

std::shared_ptr<Session> McpServer::openSession(const QString &transportName,
                                                SessionChannel *channel, const Principal &principal)
{
    if (m_sessions.size() >= m_maxSessions) {
        spdlog::warn("refusing a new {} session: the limit of {} sessions is reached",
                     transportName.toStdString(), m_maxSessions);
        return nullptr;
    }
    // The id is a bearer secret on the HTTP transports: whoever knows it speaks for the session.
    auto session = std::make_shared<Session>(unguessableId(""), transportName, channel, principal);
    m_sessions.insert(session->id(), session);
    spdlog::debug("session {} opened on {} for {}", session->id().toStdString(),
                  transportName.toStdString(), principal.name().toStdString());
    Q_EMIT sessionOpened(session->id(), transportName);
    return session;
}

void McpServer::closeSession(const QString &id, const QString &reason)
{
    const std::shared_ptr<Session> session = m_sessions.take(id);
    if (!session)
        return;
    session->close(reason);
    spdlog::debug("session {} closed: {}", id.toStdString(), reason.toStdString());
    Q_EMIT sessionClosed(id, reason);
}

bool McpServer::handlePayload(const std::shared_ptr<Session> &session,
                              const jsonrpc::Payload &payload, std::shared_ptr<Exchange> exchange)
{
    session->touch();
    auto singleError = [&](int code, const QString &message) {
        auto tracker = std::make_shared<PayloadTracker>(exchange, false);
        tracker->addResponse(jsonrpc::makeError(QJsonValue::Null, code, message));
        tracker->seal();
        return true;
    };
    if (payload.parseError)
        return singleError(jsonrpc::ParseError,
                           QStringLiteral("parse error: %1").arg(payload.parseErrorText));
    if (!payload.batch && payload.messages.size() == 1
        && isStatelessRequest(payload.messages.first())) {
        const jsonrpc::Message &message = payload.messages.first();
        auto meta = readRequestMeta(message.params);
        if (const auto *read = std::get_if<RequestMeta>(&meta);
            read && !protocol::isModern(read->protocolVersion))
            meta = unsupportedVersion(read->protocolVersion);
        if (const auto *rejection = std::get_if<RequestRejection>(&meta)) {
            exchange->complete(rejectionResponse(message.id, *rejection));
            return true;
        }
        session->addStatelessRequest(jsonrpc::idKey(message.id),
                                     serveStateless(message, std::get<RequestMeta>(meta),
                                                    std::move(exchange), session->transportName(),
                                                    session->principal()));
        return true;
    }
    if (payload.batch) {
        if (payload.messages.isEmpty())
            return singleError(jsonrpc::InvalidRequest,
                               QStringLiteral("an empty batch is not a valid request"));
        if (!session->isInitialized() || !protocol::allowsBatches(session->protocolVersion()))
            return singleError(jsonrpc::InvalidRequest,
                               QStringLiteral("JSON-RPC batches are not part of protocol revision "
                                              "%1 (only %2 has them)")
                                       .arg(session->isInitialized()
                                                    ? session->protocolVersion()
                                                    : QStringLiteral("(not negotiated yet)"),
                                            protocol::V2025_03_26));
        for (const jsonrpc::Message &message : payload.messages) {
            if (message.method == QLatin1String("initialize"))
                return singleError(jsonrpc::InvalidRequest,
                                   QStringLiteral("initialize must not be part of a batch"));
        }
    }

    auto tracker = std::make_shared<PayloadTracker>(std::move(exchange), payload.batch);
    for (const jsonrpc::Message &message : payload.messages) {
        switch (message.kind) {
        case jsonrpc::MessageKind::Invalid:
            tracker->addResponse(jsonrpc::makeError(
                    message.id, jsonrpc::InvalidRequest,
                    QStringLiteral("invalid request: %1").arg(message.invalidReason)));
            break;
        case jsonrpc::MessageKind::Request:
            dispatchRequest(session, message, tracker);
            break;
        case jsonrpc::MessageKind::Notification:
            handleNotification(session, message);
            break;
        case jsonrpc::MessageKind::Response:
            if (!session->deliverClientResponse(message.object))
                spdlog::warn("session {}: a response to no request of ours (id {})",
                             session->id().toStdString(), jsonrpc::idKey(message.id).toStdString());
            break;
        }
    }
    tracker->seal();
    return tracker->expectsReply();
}

std::shared_ptr<Session> McpServer::serveStateless(const jsonrpc::Message &message,
                                                   const RequestMeta &meta,
                                                   std::shared_ptr<Exchange> exchange,
                                                   const QString &transportName,
                                                   const Principal &principal)
{
    auto session = std::make_shared<Session>(Session::ownerKey(principal), transportName, nullptr,
                                             principal);
    session->setNegotiated(meta.protocolVersion, meta.clientInfo);
    session->makeStateless(meta.clientCapabilities);
    if (meta.logLevel)
        session->setLogLevel(*meta.logLevel);
    dispatchDetached(session, message, std::move(exchange));
    return session;
}

void McpServer::dispatchDetached(const std::shared_ptr<Session> &session,
                                 const jsonrpc::Message &message,
                                 std::shared_ptr<Exchange> exchange)
{
    auto tracker = std::make_shared<PayloadTracker>(std::move(exchange), false);
    dispatchRequest(session, message, tracker);
    tracker->seal();
    if (session->requestsInFlight() > 0) {
        m_statelessInFlight.insert(session.get(), session);
        // Queued: the session must not be destroyed inside its own signal.
        connect(
                session.get(), &Session::allSettled, this,
                [this, key = session.get()] { m_statelessInFlight.remove(key); },
                Qt::QueuedConnection);
    }
}

void McpServer::dispatchRequest(const std::shared_ptr<Session> &session,
                                const jsonrpc::Message &message,
                                const std::shared_ptr<PayloadTracker> &tracker)
{
    const QString key = jsonrpc::idKey(message.id);
    if (session->isRequestInFlight(key)) {
        tracker->addResponse(jsonrpc::makeError(
                message.id, jsonrpc::InvalidRequest,
                QStringLiteral("request id %1 is already in use by a request in flight")
                        .arg(key.mid(2))));
        return;
    }
    const quint64 serial = session->beginRequest(key, tracker);
    Request request{session, key, serial, message.method, message.id, message.params.toObject()};

    if (m_draining && message.method != QLatin1String("ping")) {
        request.fail(jsonrpc::RequestFailed,
                     QStringLiteral("the server is shutting down: it takes no new requests "
                                    "(calls in flight finish)"));
        return;
    }
    const QHash<QString, Method> &methods = session->isStateless() ? m_statelessMethods : m_methods;
    const auto method = methods.constFind(message.method);
    if (method == methods.cend()) {
        request.fail(jsonrpc::MethodNotFound,
                     QStringLiteral("method not found: %1").arg(message.method));
        return;
    }
    if (!session->isInitialized() && message.method != QLatin1String("initialize")
        && message.method != QLatin1String("ping")) {
        request.fail(jsonrpc::InvalidRequest,
                     QStringLiteral("the session is not initialized: send initialize before %1")
                             .arg(message.method));
        return;
    }
    if (!message.params.isUndefined() && !message.params.isObject()) {
        request.fail(jsonrpc::InvalidParams,
                     QStringLiteral("params must be an object for %1").arg(message.method));
        return;
    }
    if (!method->paramsSchema.isEmpty()) {
        const QString violation = SchemaValidator::validate(method->paramsSchema, request.params,
                                                            QStringLiteral("params"));
        if (!violation.isEmpty()) {
            request.fail(jsonrpc::InvalidParams, violation);
            return;
        }
    }
    try {
        (this->*(method->handler))(request);
    } catch (const std::exception &error) {
        spdlog::error("{} failed: {}", message.method.toStdString(), error.what());
        request.fail(jsonrpc::InternalError,
                     QStringLiteral("internal error in %1").arg(message.method));
    }
}

void McpServer::handleNotification(const std::shared_ptr<Session> &session,
                                   const jsonrpc::Message &message)
{
    const QJsonObject params = message.params.toObject();
    if (message.method == QLatin1String("notifications/cancelled")) {
        const QJsonValue requestId = params.value(QLatin1String("requestId"));
        const QString reason = params.value(QLatin1String("reason"))
                                       .toString(QStringLiteral("cancelled by the client"));
        const QString key = jsonrpc::idKey(requestId);
        if (session->isRequestInFlight(key))
            session->cancelRequest(key, reason);
        else if (const std::shared_ptr<Session> stateless = session->statelessRequest(key))
            stateless->close(reason);
    } else if (message.method == QLatin1String("notifications/initialized")) {
        spdlog::debug("session {} initialized", session->id().toStdString());
    }
    // Other notifications (progress from the client, roots changes) need nothing from us;
    // notifications are never answered, not even unknown ones.
}

void McpServer::initialize(const Request &request)
{
    if (request.session->isInitialized()) {
        request.fail(jsonrpc::InvalidRequest, QStringLiteral("the session is already initialized"));
        return;
    }
    const QString requested = request.params.value(QLatin1String("protocolVersion")).toString();
    const QString version =
            protocol::isSupported(requested) ? requested : protocol::supportedVersions().first();
    const QJsonObject clientInfo = request.params.value(QLatin1String("clientInfo")).toObject();
    request.session->setNegotiated(version, clientInfo);
    spdlog::info("session {} ({}): client {} {} speaks {}", request.session->id().toStdString(),
                 request.session->transportName().toStdString(),
                 clientInfo.value(QLatin1String("name")).toString().toStdString(),
                 clientInfo.value(QLatin1String("version")).toString().toStdString(),
                 version.toStdString());

    QJsonObject serverInfo{{QLatin1String("name"), m_identity.name},
                           {QLatin1String("version"), m_identity.version}};
    if (protocol::hasStructuredOutput(version))
        serverInfo.insert(QLatin1String("title"), m_identity.title);
    QJsonObject result{{QLatin1String("protocolVersion"), version},
                       {QLatin1String("capabilities"), capabilities()},
                       {QLatin1String("serverInfo"), serverInfo}};
    insertIfSet(result, "instructions", m_identity.instructions);
    request.reply(result);
}

void McpServer::discover(const Request &request)
{
    QJsonObject result{
            {QLatin1String("supportedVersions"),
             QJsonArray::fromStringList(protocol::allVersions())},
            {QLatin1String("capabilities"), statelessCapabilities()},
            {QLatin1String("_meta"),
             QJsonObject{{QLatin1String(requestmeta::ServerInfoKey),
                          QJsonObject{{QLatin1String("name"), m_identity.name},
                                      {QLatin1String("title"), m_identity.title},
                                      {QLatin1String("version"), m_identity.version}}}}}};
    insertIfSet(result, "instructions", m_identity.instructions);
    request.reply(result);
}

void McpServer::insertCacheHints(QJsonObject &result, const QString &method)
{
    // What every client sees alike may be kept a minute; what the resources say (job output,
    // per-session listings) changes with every call. Nothing is for shared caches: behind
    // authentication, answers belong to the principal that asked.
    static const QSet<QString> stable{QStringLiteral("server/discover"),
                                      QStringLiteral("tools/list"), QStringLiteral("prompts/list"),
                                      QStringLiteral("resources/templates/list")};
    static const QSet<QString> volatileResults{QStringLiteral("resources/list"),
                                               QStringLiteral("resources/read")};
    if (!stable.contains(method) && !volatileResults.contains(method))
        return;
    result.insert(QLatin1String("ttlMs"), stable.contains(method) ? 60000 : 0);
    result.insert(QLatin1String("cacheScope"), QLatin1String("private"));
}

QJsonObject McpServer::statelessCapabilities() const
{
    return QJsonObject{
            {QLatin1String("tools"), QJsonObject{{QLatin1String("listChanged"), true}}},
            {QLatin1String("resources"),
             QJsonObject{{QLatin1String("subscribe"), true}, {QLatin1String("listChanged"), true}}},
            {QLatin1String("prompts"), QJsonObject{{QLatin1String("listChanged"), true}}},
            {QLatin1String("logging"), QJsonObject{}},
            {QLatin1String("completions"), QJsonObject{}},
            {QLatin1String("extensions"),
             QJsonObject{{QLatin1String(tasks::ExtensionId), QJsonObject{}}}},
    };
}

QJsonObject McpServer::capabilities() const
{
    return QJsonObject{
            {QLatin1String("tools"), QJsonObject{{QLatin1String("listChanged"), true}}},
            {QLatin1String("resources"),
             QJsonObject{{QLatin1String("subscribe"), true}, {QLatin1String("listChanged"), true}}},
            {QLatin1String("prompts"), QJsonObject{{QLatin1String("listChanged"), true}}},
            {QLatin1String("logging"), QJsonObject{}},
            {QLatin1String("completions"), QJsonObject{}},
    };
}

void McpServer::ping(const Request &request)
{
    request.reply(QJsonObject{});
}

void McpServer::setLogLevel(const Request &request)
{
    request.session->setLogLevel(
            *parseLogLevel(request.params.value(QLatin1String("level")).toString()));
    request.reply(QJsonObject{});
}

void McpServer::beginDraining()
{
    m_draining = true;
    m_subscriptions.closeAll();
}

void McpServer::broadcast(const QString &method, const QJsonObject &params)
{
    for (const auto &session : std::as_const(m_sessions)) {
        if (session->isInitialized())
            session->sendUnrelated(jsonrpc::makeNotification(method, params));
    }
}

} // namespace cmcp
