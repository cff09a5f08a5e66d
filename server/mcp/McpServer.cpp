#include "mcp/McpServer.h"

#include "mcp/ProtocolVersion.h"
#include "mcp/RunningCall.h"
#include "mcp/SchemaValidator.h"
#include "mcp/ToolCall.h"
#include "common/UnguessableId.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QPointer>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QSet>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

QJsonObject schema(const char *json)
{
    return QJsonDocument::fromJson(QByteArray(json)).object();
}

QString encodeCursor(qsizetype offset)
{
    return QString::fromLatin1(
            QByteArray("o:" + QByteArray::number(offset))
                    .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

std::optional<qsizetype> decodeCursor(const QString &cursor)
{
    const QByteArray raw = QByteArray::fromBase64(cursor.toLatin1(), QByteArray::Base64UrlEncoding);
    if (!raw.startsWith("o:"))
        return std::nullopt;
    bool ok = false;
    const qsizetype offset = raw.mid(2).toLongLong(&ok);
    if (!ok || offset < 0)
        return std::nullopt;
    return offset;
}

QJsonObject describeTool(const ToolDefinition &tool, const QString &version)
{
    QJsonObject object{{QLatin1String("name"), tool.name},
                       {QLatin1String("description"), tool.description},
                       {QLatin1String("inputSchema"), tool.inputSchema}};
    if (protocol::hasStructuredOutput(version)) {
        if (!tool.title.isEmpty())
            object.insert(QLatin1String("title"), tool.title);
        if (tool.outputSchema)
            object.insert(QLatin1String("outputSchema"), *tool.outputSchema);
    }
    if (protocol::hasToolAnnotations(version)) {
        QJsonObject annotations{{QLatin1String("readOnlyHint"), tool.annotations.readOnly},
                                {QLatin1String("destructiveHint"), tool.annotations.destructive},
                                {QLatin1String("idempotentHint"), tool.annotations.idempotent},
                                {QLatin1String("openWorldHint"), tool.annotations.openWorld}};
        if (!tool.title.isEmpty())
            annotations.insert(QLatin1String("title"), tool.title);
        object.insert(QLatin1String("annotations"), annotations);
    }
    if (protocol::isModern(version) && tool.taskSupport != TaskSupport::Forbidden)
        object.insert(QLatin1String("execution"),
                      QJsonObject{{QLatin1String("taskSupport"),
                                   tool.taskSupport == TaskSupport::Required
                                           ? QLatin1String("required")
                                           : QLatin1String("optional")}});
    return object;
}

void insertIfSet(QJsonObject &object, const char *key, const QString &value)
{
    if (!value.isEmpty())
        object.insert(QLatin1String(key), value);
}

} // namespace

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
    const char *cursorOnly = R"({"type":"object","properties":{"cursor":{"type":"string"}}})";
    const char *uriOnly =
            R"({"type":"object","required":["uri"],"properties":{"uri":{"type":"string"}}})";
    m_methods = {
            {QStringLiteral("initialize"),
             {&McpServer::initialize,
              schema(R"({"type":"object","required":["protocolVersion","capabilities","clientInfo"],
            "properties":{"protocolVersion":{"type":"string"},"capabilities":{"type":"object"},
            "clientInfo":{"type":"object","required":["name"],"properties":{
              "name":{"type":"string","maxLength":256,"pattern":"^[^\\x00-\\x1f\\x7f]*$"},
              "version":{"type":"string","maxLength":256,"pattern":"^[^\\x00-\\x1f\\x7f]*$"}}}}})")}},
            {QStringLiteral("ping"), {&McpServer::ping, {}}},
            {QStringLiteral("logging/setLevel"),
             {&McpServer::setLogLevel,
              schema(R"({"type":"object","required":["level"],"properties":{"level":
            {"enum":["debug","info","notice","warning","error","critical","alert","emergency"]}}})")}},
            {QStringLiteral("tools/list"), {&McpServer::listTools, schema(cursorOnly)}},
            {QStringLiteral("tools/call"),
             {&McpServer::callTool,
              schema(R"({"type":"object","required":["name"],"properties":{"name":{"type":"string"},
            "arguments":{"type":"object"},"_meta":{"type":"object","properties":{"progressToken":{"type":["string","integer"]}}}}})")}},
            {QStringLiteral("resources/list"), {&McpServer::listResources, schema(cursorOnly)}},
            {QStringLiteral("resources/templates/list"),
             {&McpServer::listResourceTemplates, schema(cursorOnly)}},
            {QStringLiteral("resources/read"), {&McpServer::readResource, schema(uriOnly)}},
            {QStringLiteral("resources/subscribe"), {&McpServer::subscribe, schema(uriOnly)}},
            {QStringLiteral("resources/unsubscribe"), {&McpServer::unsubscribe, schema(uriOnly)}},
            {QStringLiteral("prompts/list"), {&McpServer::listPrompts, schema(cursorOnly)}},
            {QStringLiteral("prompts/get"),
             {&McpServer::getPrompt,
              schema(R"({"type":"object","required":["name"],"properties":{"name":{"type":"string"},
            "arguments":{"type":"object","additionalProperties":{"type":"string"}}}})")}},
            {QStringLiteral("completion/complete"),
             {&McpServer::complete,
              schema(R"({"type":"object","required":["ref","argument"],"properties":{
            "ref":{"type":"object","required":["type"],"properties":{"type":{"enum":["ref/prompt","ref/resource"]},
                   "name":{"type":"string"},"uri":{"type":"string"}}},
            "argument":{"type":"object","required":["name","value"],"properties":{"name":{"type":"string"},"value":{"type":"string"}}},
            "context":{"type":"object"}}})")}},
    };

    m_statelessMethods = m_methods;
    for (const char *removed :
         {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
        m_statelessMethods.remove(QLatin1String(removed));
    m_statelessMethods.insert(QStringLiteral("server/discover"), {&McpServer::discover, {}});
    // Multi round-trip requests: a retry brings the answers, and the state it was handed.
    for (const char *asking : {"tools/call", "prompts/get"}) {
        QJsonObject &paramsSchema = m_statelessMethods[QLatin1String(asking)].paramsSchema;
        QJsonObject properties = paramsSchema.value(QLatin1String("properties")).toObject();
        properties.insert(QLatin1String("inputResponses"),
                          schema(R"({"type":"object","additionalProperties":{"type":"object"}})"));
        properties.insert(QLatin1String("requestState"), schema(R"({"type":"string"})"));
        paramsSchema.insert(QLatin1String("properties"), properties);
    }
    const char *taskIdOnly =
            R"({"type":"object","required":["taskId"],"properties":{"taskId":{"type":"string"}}})";
    m_statelessMethods.insert(QStringLiteral("tasks/get"),
                              {&McpServer::getTask, schema(taskIdOnly)});
    m_statelessMethods.insert(QStringLiteral("tasks/cancel"),
                              {&McpServer::cancelTask, schema(taskIdOnly)});
    m_statelessMethods.insert(
            QStringLiteral("tasks/update"),
            {&McpServer::updateTask,
             schema(R"({"type":"object","required":["taskId"],"properties":{"taskId":{"type":"string"},
            "inputResponses":{"type":"object","additionalProperties":{"type":"object"}}}})")});

    m_statelessMethods.insert(
            QStringLiteral("subscriptions/listen"),
            {&McpServer::listen,
             schema(R"({"type":"object","required":["notifications"],"properties":{"notifications":
            {"type":"object","properties":{"toolsListChanged":{"type":"boolean"},
             "promptsListChanged":{"type":"boolean"},"resourcesListChanged":{"type":"boolean"},
             "resourceSubscriptions":{"type":"array","items":{"type":"string"}},
             "taskIds":{"type":"array","items":{"type":"string"}}}}}})")});
    // What tasks/get would answer, pushed to the listen streams that asked for the task.
    m_tasks->setChangeHandler([this](const Task &task) {
        m_subscriptions.taskChanged(task.id, task.owner, task.describe(true));
    });

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

bool McpServer::paginate(const Request &request, const QJsonArray &items, const QString &key)
{
    qsizetype offset = 0;
    if (request.params.contains(QLatin1String("cursor"))) {
        const auto decoded = decodeCursor(request.params.value(QLatin1String("cursor")).toString());
        if (!decoded || *decoded > items.size()) {
            request.fail(jsonrpc::InvalidParams,
                         QStringLiteral("params.cursor: not a cursor this server issued"));
            return false;
        }
        offset = *decoded;
    }
    QJsonObject result{{key, QJsonArray()}};
    QJsonArray page;
    for (qsizetype i = offset; i < items.size() && i < offset + m_pageSize; ++i)
        page.append(items[i]);
    result.insert(key, page);
    if (offset + m_pageSize < items.size())
        result.insert(QLatin1String("nextCursor"), encodeCursor(offset + m_pageSize));
    request.reply(result);
    return true;
}

void McpServer::listTools(const Request &request)
{
    QJsonArray items;
    for (const ToolDefinition &tool : m_tools.tools())
        items.append(describeTool(tool, request.session->protocolVersion()));
    paginate(request, items, QStringLiteral("tools"));
}

void McpServer::callTool(const Request &request)
{
    const QString name = request.params.value(QLatin1String("name")).toString();
    const QJsonObject arguments = request.params.value(QLatin1String("arguments")).toObject();
    const ToolDefinition *tool = m_tools.find(name);
    const QJsonObject binding = stateBinding(request, name, arguments);
    QJsonObject answers;
    if (request.session->isStateless()) {
        const std::optional<QJsonObject> brought = clientAnswers(request, binding);
        if (!brought)
            return;
        answers = *brought;
        request.session->setInputAnswers(answers);
    }
    // The call of a task is recorded (and checked) where it runs, in the task's own session.
    if (tool && tool->taskSupport != TaskSupport::Forbidden && request.session->isStateless()
        && tasks::declared(request.session->clientCapabilities())) {
        startTask(request, *tool, answers);
        return;
    }
    ToolCallRecord record = startCallRecord(request, name, arguments);
    if (!tool) {
        endCallRecord(record, ToolCallOutcome::UnknownTool, nullptr);
        afterRecordsDurable([request, name] {
            request.fail(jsonrpc::InvalidParams, QStringLiteral("unknown tool: %1").arg(name),
                         QJsonObject{{QLatin1String("tool"), name}});
        });
        return;
    }
    if (request.session->isStateless()) {
        QJsonObject missing;
        for (const QString &capability : tool->requiredClientCapabilities) {
            if (!request.session->clientCapabilities().contains(capability))
                missing.insert(capability, QJsonObject{});
        }
        if (!missing.isEmpty()) {
            const QString problem =
                    QStringLiteral("tool %1 needs the client capabilities %2, which this "
                                   "request's _meta does not declare")
                            .arg(name, missing.keys().join(QLatin1String(", ")));
            endCallRecord(record, ToolCallOutcome::Failed, nullptr, problem);
            afterRecordsDurable([request, problem, missing] {
                request.fail(jsonrpc::MissingRequiredClientCapability, problem,
                             QJsonObject{{QLatin1String("requiredCapabilities"), missing}});
            });
            return;
        }
        const bool tasksDeclared = tasks::declared(request.session->clientCapabilities());
        // A task's own call runs without the extension, lest it become a task again.
        if (tool->taskSupport == TaskSupport::Required && !tasksDeclared
            && request.session->taskId().isEmpty()) {
            const QString problem =
                    QStringLiteral("tool %1 runs only as a task, and this request's _meta does "
                                   "not declare the extension %2")
                            .arg(name, QLatin1String(tasks::ExtensionId));
            endCallRecord(record, ToolCallOutcome::Failed, nullptr, problem);
            afterRecordsDurable([request, problem] {
                request.fail(jsonrpc::MissingRequiredClientCapability, problem,
                             tasks::requiredCapabilityData());
            });
            return;
        }
    }
    const QString version = request.session->protocolVersion();
    const QString violation =
            SchemaValidator::validate(tool->inputSchema, arguments, QStringLiteral("arguments"));
    if (!violation.isEmpty()) {
        endCallRecord(record, ToolCallOutcome::InvalidArguments, nullptr, violation);
        afterRecordsDurable([request, version, name, violation] {
            // Since 2025-11-25 the specification wants invalid arguments reported as a tool
            // error, so that the model can correct itself; earlier revisions use -32602.
            if (protocol::atLeast(version, protocol::V2025_11_25)) {
                request.reply(QJsonObject{
                        {QLatin1String("content"),
                         ToolResult::error(QStringLiteral("invalid arguments for %1: %2")
                                                   .arg(name, violation))
                                 .content},
                        {QLatin1String("isError"), true}});
            } else {
                request.fail(jsonrpc::InvalidParams, violation);
            }
        });
        return;
    }

    if (const QString refusal = failClosedReason(); !refusal.isEmpty()) {
        const ToolResult refused = ToolResult::error(refusal);
        endCallRecord(record, ToolCallOutcome::Failed, &refused, refusal);
        afterRecordsDurable([request, content = refused.content] {
            request.reply(QJsonObject{{QLatin1String("content"), content},
                                      {QLatin1String("isError"), true}});
        });
        return;
    }

    auto running = std::make_shared<RunningCall>(*this, request.session, request.key,
                                                 request.serial, request.id, version,
                                                 tool->outputSchema, std::move(record));
    const QJsonValue progressToken = request.params.value(QLatin1String("_meta"))
                                             .toObject()
                                             .value(QLatin1String("progressToken"));
    auto call = std::make_shared<ToolCall>(
            request.session, request.key, name, arguments, progressToken,
            [running](const ToolResult &result) { running->finish(result); });
    // A task's call waits for its answers in the task instead.
    if (request.session->isStateless() && request.session->taskId().isEmpty())
        call->setInputRequiredHandler([server = QPointer<McpServer>(this), running, binding,
                                       session = std::weak_ptr<Session>(request.session)](
                                              const QJsonObject &inputRequests) {
            const auto asking = session.lock();
            if (!server || !asking)
                return;
            running->finishInputRequired(inputRequests,
                                         server->sealAnswers(binding, asking->usedInputAnswers()));
        });
    // Whichever comes first, the tool's result or the cancellation, ends the record.
    request.session->setCancelHandler(request.key, [call, running](const QString &reason) {
        if (!call->isFinished() && !call->isCancelled())
            running->endCancelled(reason);
        call->cancel(reason);
    });
    const quint64 callId = running->record().callId;
    m_running.emplace(callId, std::move(running));
    connect(call.get(), &ToolCall::outputReported, this,
            [this, callId](qint64 outputBytes) { Q_EMIT toolCallOutput(callId, outputBytes); });
    // A copy: a handler that changes the tool list would otherwise run from moved storage.
    const ToolHandler handler = tool->handler;
    handler(call);
}

QJsonObject McpServer::stateBinding(const Request &request, const QString &name,
                                    const QJsonObject &arguments)
{
    const QByteArray digest = QCryptographicHash::hash(
            QJsonDocument(arguments).toJson(QJsonDocument::Compact), QCryptographicHash::Sha256);
    return {{QLatin1String("method"), request.method},
            {QLatin1String("name"), name},
            {QLatin1String("arguments"), QString::fromLatin1(digest.toHex())},
            {QLatin1String("owner"), Session::ownerKey(request.session->principal())}};
}

std::optional<QJsonObject> McpServer::clientAnswers(const Request &request,
                                                    const QJsonObject &binding)
{
    QJsonObject answers;
    if (const QJsonValue state = request.params.value(QLatin1String("requestState"));
        !state.isUndefined()) {
        const auto opened =
                m_requestStates.open(state.toString(), QDateTime::currentMSecsSinceEpoch());
        if (const auto *problem = std::get_if<QString>(&opened)) {
            request.fail(jsonrpc::InvalidParams, QStringLiteral("params.") + *problem);
            return std::nullopt;
        }
        const QJsonObject &payload = std::get<QJsonObject>(opened);
        if (payload.value(QLatin1String("for")).toObject() != binding) {
            request.fail(jsonrpc::InvalidParams,
                         QStringLiteral("params.requestState was issued for another request (a "
                                        "different method, %1, arguments or principal)")
                                 .arg(request.method == QLatin1String("prompts/get")
                                              ? QLatin1String("prompt")
                                              : QLatin1String("tool")));
            return std::nullopt;
        }
        answers = payload.value(QLatin1String("answers")).toObject();
    }
    const QJsonObject responses = request.params.value(QLatin1String("inputResponses")).toObject();
    for (auto it = responses.begin(); it != responses.end(); ++it)
        answers.insert(it.key(), it.value());
    return answers;
}

QString McpServer::sealAnswers(const QJsonObject &binding, const QJsonObject &answers) const
{
    return m_requestStates.seal(
            {{QLatin1String("for"), binding}, {QLatin1String("answers"), answers}},
            QDateTime::currentMSecsSinceEpoch());
}

bool McpServer::replyInputRequired(const Request &request, const QList<InputRequest> &questions,
                                   const QJsonObject &answers, const QJsonObject &binding)
{
    QJsonObject missing;
    QJsonObject used;
    for (const InputRequest &question : questions) {
        const QString capability = clientinput::capabilityOf(question.method);
        if (!request.session->clientCapabilities().contains(capability)) {
            request.fail(jsonrpc::MissingRequiredClientCapability,
                         QStringLiteral("%1 needs the client capability %2, which this request's "
                                        "_meta does not declare")
                                 .arg(request.method, capability),
                         QJsonObject{{QLatin1String("requiredCapabilities"),
                                      QJsonObject{{capability, QJsonObject{}}}}});
            return true;
        }
        const QJsonValue answer = answers.value(question.key);
        if (!answer.isUndefined() && clientinput::answerProblem(question.method, answer).isEmpty())
            used.insert(question.key, answer);
        else
            missing.insert(question.key, clientinput::describe(question.method, question.params));
    }
    if (missing.isEmpty())
        return false;
    request.reply(QJsonObject{{QLatin1String("resultType"), QLatin1String("input_required")},
                              {QLatin1String("inputRequests"), missing},
                              {QLatin1String("requestState"), sealAnswers(binding, used)}});
    return true;
}

void McpServer::startTask(const Request &request, const ToolDefinition &tool,
                          const QJsonObject &answers)
{
    const QJsonObject arguments = request.params.value(QLatin1String("arguments")).toObject();
    // No tool runs until the answers are in: the task's call is what is recorded.
    if (replyInputRequired(request, tool.inputBeforeTask, answers,
                           stateBinding(request, tool.name, arguments)))
        return;
    const Principal &principal = request.session->principal();
    const QString owner = Session::ownerKey(principal);
    if (const QString refusal = m_tasks->refusal(owner, principal.name()); !refusal.isEmpty()) {
        request.fail(jsonrpc::RequestFailed, refusal);
        return;
    }
    QString unrecorded;
    Task *created = m_tasks->create(owner, tool.name, &unrecorded);
    if (!created) {
        spdlog::error("task of {}: {}", tool.name.toStdString(), unrecorded.toStdString());
        request.fail(jsonrpc::InternalError,
                     QStringLiteral("the task could not be started: %1").arg(unrecorded));
        return;
    }
    Task &task = *created;
    auto session =
            std::make_shared<Session>(owner, request.session->transportName(), nullptr, principal);
    session->setNegotiated(request.session->protocolVersion(), request.session->clientInfo());
    session->makeStateless(tasks::withoutExtension(request.session->clientCapabilities()));
    task.call = session;
    const QString taskId = task.id;
    session->setTaskId(taskId);
    session->setInputAnswers(answers);
    session->setInputParking(
            [store = std::weak_ptr<TaskStore>(m_tasks),
             taskId](const QString &key, const QJsonObject &question, ClientReply reply) {
                if (const auto tasks = store.lock())
                    tasks->park(taskId, key, question, std::move(reply));
                else
                    reply({}, QStringLiteral("the server is shutting down"));
            });
    spdlog::info("task {} of {}: {}", taskId.toStdString(), principal.name().toStdString(),
                 tool.name.toStdString());

    jsonrpc::Message call;
    call.kind = jsonrpc::MessageKind::Request;
    call.id = taskId;
    call.method = request.method;
    call.params = request.params;
    dispatchDetached(session, call, std::make_shared<TaskExchange>(m_tasks, taskId));
    // The call's start is recorded by now; the client learns of the task once that record is
    // durable, as it would learn of a result.
    afterRecordsDurable([request, tasks = m_tasks, taskId, owner] {
        const Task *created = tasks->find(taskId, owner);
        QJsonObject result = created ? created->describe(false) : QJsonObject{};
        result.insert(QLatin1String("resultType"), QLatin1String("task"));
        request.reply(result);
    });
}

Task *McpServer::requestedTask(const Request &request)
{
    if (!tasks::declared(request.session->clientCapabilities())) {
        request.fail(jsonrpc::MissingRequiredClientCapability,
                     QStringLiteral("%1 needs the extension %2, which this request's _meta does "
                                    "not declare")
                             .arg(request.method, QLatin1String(tasks::ExtensionId)),
                     tasks::requiredCapabilityData());
        return nullptr;
    }
    const QString id = request.params.value(QLatin1String("taskId")).toString();
    Task *task = m_tasks->find(id, Session::ownerKey(request.session->principal()));
    if (!task)
        request.fail(jsonrpc::InvalidParams,
                     QStringLiteral("params.taskId: unknown task %1").arg(id),
                     QJsonObject{{QLatin1String("taskId"), id}});
    return task;
}

void McpServer::getTask(const Request &request)
{
    if (const Task *task = requestedTask(request)) {
        QJsonObject result = task->describe(true);
        result.insert(QLatin1String("resultType"), QLatin1String("complete"));
        request.reply(result);
    }
}

void McpServer::cancelTask(const Request &request)
{
    if (Task *task = requestedTask(request)) {
        m_tasks->cancel(*task, QStringLiteral("the task was cancelled by its client"));
        request.reply(QJsonObject{{QLatin1String("resultType"), QLatin1String("complete")}});
    }
}

void McpServer::updateTask(const Request &request)
{
    Task *task = requestedTask(request);
    if (!task)
        return;
    const QString problem = m_tasks->answer(
            *task, request.params.value(QLatin1String("inputResponses")).toObject());
    if (!problem.isEmpty()) {
        request.fail(jsonrpc::InvalidParams, problem);
        return;
    }
    request.reply(QJsonObject{{QLatin1String("resultType"), QLatin1String("complete")}});
}

ToolCallRecord McpServer::startCallRecord(const Request &request, const QString &tool,
                                          const QJsonObject &arguments)
{
    ToolCallRecord call;
    call.callId = ++m_lastCallId;
    call.sessionId = request.session->id();
    call.transport = request.session->transportName();
    call.clientName = request.session->clientInfo().value(QLatin1String("name")).toString();
    call.tool = tool;
    call.taskId = request.session->taskId();
    call.arguments = arguments;
    call.startedAt = QDateTime::currentDateTimeUtc();
    Q_EMIT toolCallStarted(call);
    return call;
}

void McpServer::endCallRecord(ToolCallRecord &call, ToolCallOutcome outcome,
                              const ToolResult *result, const QString &detail)
{
    call.outcome = outcome;
    call.detail = detail;
    call.durationMs = call.startedAt.msecsTo(QDateTime::currentDateTimeUtc());
    m_running.erase(call.callId);
    Q_EMIT toolCallFinished(call, result);
}

void McpServer::afterRecordsDurable(std::function<void()> then)
{
    if (!m_durabilityWait) {
        then();
        return;
    }
    ++m_answersAwaitingRecords;
    m_durabilityWait([server = QPointer<McpServer>(this), then = std::move(then)] {
        if (server)
            --server->m_answersAwaitingRecords;
        then();
    });
}

QList<ToolCallRecord> McpServer::callsInFlight() const
{
    QList<ToolCallRecord> calls;
    for (const auto &[callId, running] : m_running)
        calls.append(running->record());
    return calls;
}

bool McpServer::cancelCall(quint64 callId, const QString &reason)
{
    const auto it = m_running.find(callId);
    if (it == m_running.end())
        return false;
    // Held here: cancelling ends the record, which takes the call out of m_running.
    const std::shared_ptr<RunningCall> running = it->second;
    if (!running->cancel(reason)) {
        m_running.erase(it);
        return false;
    }
    return true;
}

QString toolCallOutcomeName(ToolCallOutcome outcome)
{
    switch (outcome) {
    case ToolCallOutcome::Succeeded:
        return QStringLiteral("succeeded");
    case ToolCallOutcome::Failed:
        return QStringLiteral("failed");
    case ToolCallOutcome::InvalidArguments:
        return QStringLiteral("invalid_arguments");
    case ToolCallOutcome::UnknownTool:
        return QStringLiteral("unknown_tool");
    case ToolCallOutcome::BrokeOutputSchema:
        return QStringLiteral("broke_output_schema");
    case ToolCallOutcome::Cancelled:
        return QStringLiteral("cancelled");
    case ToolCallOutcome::InputRequired:
        return QStringLiteral("input_required");
    }
    return QStringLiteral("unknown");
}

void McpServer::listResources(const Request &request)
{
    QJsonArray items;
    m_resources.setCaller(request.session->id(), request.session->principal());
    const QList<ResourceDefinition> resources = m_resources.listAll();
    m_resources.clearCaller();
    for (const ResourceDefinition &resource : resources) {
        QJsonObject object{{QLatin1String("uri"), resource.uri},
                           {QLatin1String("name"), resource.name}};
        insertIfSet(object, "title", resource.title);
        insertIfSet(object, "description", resource.description);
        insertIfSet(object, "mimeType", resource.mimeType);
        if (resource.size)
            object.insert(QLatin1String("size"), double(*resource.size));
        items.append(object);
    }
    paginate(request, items, QStringLiteral("resources"));
}

void McpServer::listResourceTemplates(const Request &request)
{
    QJsonArray items;
    for (const ResourceTemplateDefinition &resourceTemplate : m_resources.templates()) {
        QJsonObject object{{QLatin1String("uriTemplate"), resourceTemplate.uriTemplate},
                           {QLatin1String("name"), resourceTemplate.name}};
        insertIfSet(object, "title", resourceTemplate.title);
        insertIfSet(object, "description", resourceTemplate.description);
        insertIfSet(object, "mimeType", resourceTemplate.mimeType);
        items.append(object);
    }
    paginate(request, items, QStringLiteral("resourceTemplates"));
}

void McpServer::failResourceNotFound(const Request &request, const QString &uri)
{
    // The modern era reports a missing resource as invalid params; the 2025 revisions had their
    // own code.
    request.fail(request.session->isStateless() ? jsonrpc::InvalidParams
                                                : jsonrpc::ResourceNotFound,
                 QStringLiteral("resource not found: %1").arg(uri),
                 QJsonObject{{QLatin1String("uri"), uri}});
}

void McpServer::readResource(const Request &request)
{
    const QString uri = request.params.value(QLatin1String("uri")).toString();
    const auto match = m_resources.match(uri);
    if (!match)
        return failResourceNotFound(request, uri);
    m_resources.setCaller(request.session->id(), request.session->principal());
    match->read(uri, match->variables, [request](const ResourceReadResult &result) {
        if (result.errorCode == jsonrpc::ResourceNotFound && request.session->isStateless())
            request.fail(jsonrpc::InvalidParams, result.error,
                         QJsonObject{{QLatin1String("uri"),
                                      request.params.value(QLatin1String("uri"))}});
        else if (result.errorCode != 0)
            request.fail(result.errorCode, result.error,
                         QJsonObject{{QLatin1String("uri"),
                                      request.params.value(QLatin1String("uri"))}});
        else
            request.reply(QJsonObject{{QLatin1String("contents"), result.contents}});
    });
    m_resources.clearCaller();
}

void McpServer::subscribe(const Request &request)
{
    const QString uri = request.params.value(QLatin1String("uri")).toString();
    if (!m_resources.match(uri))
        return failResourceNotFound(request, uri);
    request.session->subscriptions().insert(uri);
    request.reply(QJsonObject{});
}

void McpServer::unsubscribe(const Request &request)
{
    request.session->subscriptions().remove(request.params.value(QLatin1String("uri")).toString());
    request.reply(QJsonObject{});
}

void McpServer::listPrompts(const Request &request)
{
    QJsonArray items;
    for (const PromptDefinition &prompt : m_prompts.prompts()) {
        QJsonObject object{{QLatin1String("name"), prompt.name}};
        insertIfSet(object, "title", prompt.title);
        insertIfSet(object, "description", prompt.description);
        QJsonArray arguments;
        for (const PromptArgument &argument : prompt.arguments) {
            QJsonObject a{{QLatin1String("name"), argument.name},
                          {QLatin1String("required"), argument.required}};
            insertIfSet(a, "description", argument.description);
            arguments.append(a);
        }
        if (!arguments.isEmpty())
            object.insert(QLatin1String("arguments"), arguments);
        items.append(object);
    }
    paginate(request, items, QStringLiteral("prompts"));
}

void McpServer::getPrompt(const Request &request)
{
    const QString name = request.params.value(QLatin1String("name")).toString();
    const PromptDefinition *prompt = m_prompts.find(name);
    if (!prompt) {
        request.fail(jsonrpc::InvalidParams, QStringLiteral("unknown prompt: %1").arg(name));
        return;
    }
    QHash<QString, QString> arguments;
    const QJsonObject given = request.params.value(QLatin1String("arguments")).toObject();
    for (auto it = given.begin(); it != given.end(); ++it)
        arguments.insert(it.key(), it.value().toString());
    for (const PromptArgument &argument : prompt->arguments) {
        if (argument.required && !arguments.contains(argument.name)) {
            request.fail(
                    jsonrpc::InvalidParams,
                    QStringLiteral("params.arguments: missing required argument '%1' of prompt %2")
                            .arg(argument.name, name));
            return;
        }
    }
    auto render = [request, prompt = *prompt, arguments](const QJsonObject &answers) {
        QJsonObject result{{QLatin1String("messages"), prompt.render(arguments, answers)}};
        insertIfSet(result, "description", prompt.description);
        request.reply(result);
    };
    if (prompt->input.isEmpty())
        return render({});
    if (request.session->isStateless()) {
        const QJsonObject binding = stateBinding(request, name, given);
        const std::optional<QJsonObject> answers = clientAnswers(request, binding);
        if (answers && !replyInputRequired(request, prompt->input, *answers, binding))
            render(*answers);
        return;
    }
    askInTurn(request, prompt->input, {}, render);
}

void McpServer::askInTurn(const Request &request, QList<InputRequest> questions,
                          QJsonObject answers, std::function<void(const QJsonObject &)> then)
{
    if (questions.isEmpty())
        return then(answers);
    const InputRequest question = questions.takeFirst();
    request.session->requestFromClient(
            request.key, question.method, question.params,
            [server = QPointer<McpServer>(this), request, questions, answers, then,
             key = question.key](const QJsonObject &result, const QString &error) mutable {
                if (!server)
                    return;
                if (!error.isEmpty())
                    return request.fail(jsonrpc::RequestFailed,
                                        QStringLiteral("%1 asked its client, and got no answer: %2")
                                                .arg(request.method, error));
                answers.insert(key, result);
                server->askInTurn(request, questions, answers, then);
            },
            60000);
}

void McpServer::complete(const Request &request)
{
    const QJsonObject ref = request.params.value(QLatin1String("ref")).toObject();
    const QJsonObject argument = request.params.value(QLatin1String("argument")).toObject();
    Completer completer;
    if (ref.value(QLatin1String("type")) == QLatin1String("ref/prompt")) {
        const PromptDefinition *prompt =
                m_prompts.find(ref.value(QLatin1String("name")).toString());
        if (!prompt) {
            request.fail(jsonrpc::InvalidParams,
                         QStringLiteral("params.ref.name: unknown prompt '%1'")
                                 .arg(ref.value(QLatin1String("name")).toString()));
            return;
        }
        completer = prompt->complete;
    } else {
        const ResourceTemplateDefinition *resourceTemplate =
                m_resources.findTemplate(ref.value(QLatin1String("uri")).toString());
        if (!resourceTemplate) {
            request.fail(jsonrpc::InvalidParams,
                         QStringLiteral("params.ref.uri: unknown resource template '%1'")
                                 .arg(ref.value(QLatin1String("uri")).toString()));
            return;
        }
        completer = resourceTemplate->complete;
    }
    QStringList values;
    if (completer)
        values = completer(argument.value(QLatin1String("name")).toString(),
                           argument.value(QLatin1String("value")).toString());
    // The specification caps one answer at 100 values.
    constexpr int maxValues = 100;
    const qsizetype total = values.size();
    QJsonObject completion{
            {QLatin1String("values"), QJsonArray::fromStringList(values.mid(0, maxValues))},
            {QLatin1String("total"), double(total)},
            {QLatin1String("hasMore"), total > maxValues}};
    request.reply(QJsonObject{{QLatin1String("completion"), completion}});
}

void McpServer::listen(const Request &request)
{
    Subscriptions::Filter filter = Subscriptions::Filter::fromParams(
            request.params.value(QLatin1String("notifications")).toObject());
    const QString owner = Session::ownerKey(request.session->principal());
    if (!filter.taskIds.isEmpty()) {
        if (!tasks::declared(request.session->clientCapabilities())) {
            request.fail(jsonrpc::MissingRequiredClientCapability,
                         QStringLiteral("notifications.taskIds needs the extension %1, which this "
                                        "request's _meta does not declare")
                                 .arg(QLatin1String(tasks::ExtensionId)),
                         tasks::requiredCapabilityData());
            return;
        }
        // Agreed to only for the principal's own tasks: another's id is left out of the
        // acknowledgement exactly as an unknown one.
        filter.taskIds.removeIf([&](const QString &id) { return !m_tasks->find(id, owner); });
    }
    const QSet<QString> taskIds = filter.taskIds;
    // Answered only when the server ends the stream; the client ends it by closing it.
    m_subscriptions.open(request.session, request.key, request.serial, request.id,
                         std::move(filter));
    // Each task's state as it is now, so that a change between the client's last tasks/get and
    // this stream is not lost.
    for (const QString &id : taskIds) {
        if (const Task *task = m_tasks->find(id, owner))
            m_subscriptions.taskChanged(id, owner, task->describe(true));
    }
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
