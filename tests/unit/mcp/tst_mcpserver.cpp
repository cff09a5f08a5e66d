#include "mcp/Exchange.h"
#include "mcp/JsonRpc.h"
#include "mcp/McpServer.h"
#include "mcp/ProtocolVersion.h"
#include "mcp/Session.h"
#include "mcp/ToolCall.h"
#include "mcp/ToolResult.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTimer>
#include <QtTest>

#include <spdlog/spdlog.h>

#include <memory>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;

namespace {

// Test JSON is written with single quotes (moc 6.4 mis-reads raw string literals that contain
// a double quote); this turns it into real JSON text.
QByteArray jsonText(QString json)
{
    return json.replace(u'\'', u'"').toUtf8();
}

QJsonObject objectFrom(const QString &json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(jsonText(json), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        qFatal("bad JSON object in test: %s (%s)", qPrintable(json),
               qPrintable(error.errorString()));
    return document.object();
}

// What a transport sees of one payload: messages related to its requests, and its completion.
class RecordingExchange : public Exchange
{
public:
    void sendRelated(const QJsonObject &message) override { related.append(message); }
    void complete(const QJsonValue &responses) override { completions.append(responses); }

    QList<QJsonObject> relatedWithMethod(const QString &method) const
    {
        QList<QJsonObject> found;
        for (const QJsonObject &message : related) {
            if (message.value(u"method"_s).toString() == method)
                found.append(message);
        }
        return found;
    }

    QList<QJsonObject> related;
    QList<QJsonValue> completions;
};

class RecordingChannel : public SessionChannel
{
public:
    void sendUnrelated(const QJsonObject &message) override { messages.append(message); }
    QList<QJsonObject> messages;
};

struct Sent
{
    bool owed = false; // what handlePayload returned
    std::shared_ptr<RecordingExchange> exchange;

    // The single response the payload was answered with, or an object naming what went wrong
    // (so that the test's comparisons fail with a readable value).
    QJsonObject response() const
    {
        if (exchange->completions.size() != 1)
            return QJsonObject{
                    {u"test-harness"_s,
                     u"expected one completion, got %1"_s.arg(exchange->completions.size())}};
        if (!exchange->completions.first().isObject())
            return QJsonObject{{u"test-harness"_s, u"the completion is not one response object"_s}};
        return exchange->completions.first().toObject();
    }
};

int errorCode(const QJsonObject &response)
{
    return response.value(u"error"_s).toObject().value(u"code"_s).toInt();
}

QString errorMessage(const QJsonObject &response)
{
    return response.value(u"error"_s).toObject().value(u"message"_s).toString();
}

QJsonObject resultOf(const QJsonObject &response)
{
    return response.value(u"result"_s).toObject();
}

QString firstText(const QJsonObject &toolResult)
{
    return toolResult.value(u"content"_s).toArray().first().toObject().value(u"text"_s).toString();
}

QStringList toolNames(const QJsonArray &tools)
{
    QStringList names;
    for (const QJsonValue &tool : tools)
        names.append(tool.toObject().value(u"name"_s).toString());
    return names;
}

QStringList filtered(const QStringList &values, const QString &prefix)
{
    QStringList found;
    for (const QString &value : values) {
        if (value.startsWith(prefix))
            found.append(value);
    }
    return found;
}

struct ClientReplyRecord
{
    QJsonObject result;
    QString error;
};

const QString kClose = u"closed by the test"_s;

} // namespace

class TestMcpServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    // lifecycle
    void initializeNegotiatesTheVersion_data();
    void initializeNegotiatesTheVersion();
    void secondInitializeFails();
    void requestsBeforeInitializeFail_data();
    void requestsBeforeInitializeFail();
    void pingWorksBeforeInitialize();
    void maxSessions();

    // JSON-RPC handling
    void unknownMethod();
    void paramsViolatingTheSchema_data();
    void paramsViolatingTheSchema();
    void parseErrorAndInvalidMessage();
    void notificationsProduceNoReply();
    void batchAcceptedFor20250326();
    void batchAnsweredOnceEveryMemberSettles();
    void batchRefused_data();
    void batchRefused();
    void initializeInsideABatchRefused();
    void emptyBatchRefused();
    void reusedIdInFlightRefused();
    void lateAnswerAfterCancelAndReuseIsDropped();
    void errorResponseWithNullIdIsNotAnswered();

    // tools
    void toolsListPagination();
    void toolsListForgedCursor_data();
    void toolsListForgedCursor();
    void toolsListFieldsByVersion_data();
    void toolsListFieldsByVersion();
    void unknownTool();
    void invalidArguments_data();
    void invalidArguments();
    void structuredContentByVersion_data();
    void structuredContentByVersion();
    void outputSchemaViolation();
    void contentTypesByVersion_data();
    void contentTypesByVersion();
    void asyncToolCall();
    void progress_data();
    void progress();
    void cancellation();
    void callRecordsEveryOutcome();
    void failClosedCheckRefusesCalls();
    void answersWaitForDurableRecords();
    void logLevelFilters_data();
    void logLevelFilters();
    void listChangedBroadcast();

    // server-to-client requests
    void clientRequestAnswered();
    void clientRequestErrorResponse();
    void clientRequestTimeout();
    void sessionCloseFailsOutstandingWork();

    // resources, prompts, completion
    void resourcesReadAndUnknownUri();
    void resourceTemplateVariables_data();
    void resourceTemplateVariables();
    void subscribeUnknownResource();
    void resourcesUpdatedOnlyToSubscribers();
    void promptsGet();
    void completionComplete();

private:
    Sent send(const std::shared_ptr<Session> &session, const QString &json);
    Sent sendMessage(const std::shared_ptr<Session> &session, const QJsonValue &messageOrBatch);
    Sent request(const std::shared_ptr<Session> &session, const QJsonValue &id,
                 const QString &method, const QJsonObject &params = {});
    std::shared_ptr<Session> openSession(RecordingChannel *channel = nullptr);
    std::shared_ptr<Session> initialized(const QString &version,
                                         RecordingChannel *channel = nullptr);
    QJsonObject callTool(const std::shared_ptr<Session> &session, const QJsonValue &id,
                         const QString &name, const QJsonObject &arguments,
                         const QJsonObject &meta = {});

    std::unique_ptr<McpServer> m_server;
    std::unique_ptr<QObject> m_timerContext; // owns the async tools' timers
    RecordingChannel m_channel;

    int m_echoCalls = 0;
    std::shared_ptr<ToolCall> m_lastCall;
    QStringList m_cancelReasons;
    QList<ClientReplyRecord> m_clientReplies;
    QHash<QString, QString> m_lastVariables;
};

void TestMcpServer::initTestCase()
{
    // The server logs every session it opens; the test output is more useful without that.
    spdlog::set_level(spdlog::level::off);
}

void TestMcpServer::init()
{
    m_channel.messages.clear();
    m_echoCalls = 0;
    m_lastCall.reset();
    m_cancelReasons.clear();
    m_clientReplies.clear();
    m_lastVariables.clear();
    m_timerContext = std::make_unique<QObject>();

    ServerIdentity identity;
    identity.instructions = u"Use the tools."_s;
    m_server = std::make_unique<McpServer>(identity);

    auto remember = [this](const std::shared_ptr<ToolCall> &call) {
        m_lastCall = call;
        connect(call.get(), &ToolCall::cancelled, this,
                [this](const QString &reason) { m_cancelReasons.append(reason); });
    };

    ToolDefinition echo;
    echo.name = u"echo"_s;
    echo.title = u"Echo Tool"_s;
    echo.description = u"Returns its text."_s;
    echo.inputSchema = objectFrom(
            u"{'type':'object','required':['text'],'properties':{'text':{'type':'string'}},"
            u"'additionalProperties':false}"_s);
    echo.outputSchema = objectFrom(
            u"{'type':'object','required':['echo'],'properties':{'echo':{'type':'string'}}}"_s);
    echo.annotations.readOnly = true;
    echo.annotations.destructive = false;
    echo.handler = [this](const std::shared_ptr<ToolCall> &call) {
        ++m_echoCalls;
        call->finish(ToolResult::structured({{u"echo"_s, call->arguments().value(u"text"_s)}}));
    };
    m_server->tools().add(echo);

    ToolDefinition slow;
    slow.name = u"slow"_s;
    slow.description = u"Answers after ms milliseconds."_s;
    slow.inputSchema = objectFrom(u"{'type':'object','properties':{'ms':{'type':'integer'}}}"_s);
    slow.handler = [this, remember](const std::shared_ptr<ToolCall> &call) {
        remember(call);
        QTimer::singleShot(call->arguments().value(u"ms"_s).toInt(20), m_timerContext.get(),
                           [call] { call->finish(ToolResult::text(u"slept"_s)); });
    };
    m_server->tools().add(slow);

    ToolDefinition broken;
    broken.name = u"broken"_s;
    broken.description = u"Breaks its output schema."_s;
    broken.inputSchema = objectFrom(u"{'type':'object'}"_s);
    broken.outputSchema = objectFrom(
            u"{'type':'object','required':['count'],'properties':{'count':{'type':'integer'}}}"_s);
    broken.handler = [](const std::shared_ptr<ToolCall> &call) {
        call->finish(ToolResult::structured({{u"count"_s, u"many"_s}}));
    };
    m_server->tools().add(broken);

    ToolDefinition progress;
    progress.name = u"progress"_s;
    progress.description = u"Reports progress, some of it going backwards."_s;
    progress.inputSchema = objectFrom(u"{'type':'object'}"_s);
    progress.handler = [](const std::shared_ptr<ToolCall> &call) {
        call->reportProgress(1, 3);
        call->reportProgress(2, 3, u"half way"_s);
        call->reportProgress(2, 3); // not an increase
        call->reportProgress(1.5, 3); // a decrease
        call->reportProgress(3, 3);
        call->finish(ToolResult::text(u"done"_s));
    };
    m_server->tools().add(progress);

    ToolDefinition chatty;
    chatty.name = u"chatty"_s;
    chatty.description = u"Logs at four levels."_s;
    chatty.inputSchema = objectFrom(u"{'type':'object'}"_s);
    chatty.handler = [](const std::shared_ptr<ToolCall> &call) {
        call->log(LogLevel::Debug, u"d"_s);
        call->log(LogLevel::Info, u"i"_s);
        call->log(LogLevel::Warning, u"w"_s, u"chatty"_s);
        call->log(LogLevel::Error, u"e"_s);
        call->finish(ToolResult::text(u"logged"_s));
    };
    m_server->tools().add(chatty);

    ToolDefinition ask;
    ask.name = u"ask"_s;
    ask.description = u"Asks the client for a sampling."_s;
    ask.inputSchema =
            objectFrom(u"{'type':'object','properties':{'timeoutMs':{'type':'integer'}}}"_s);
    ask.handler = [this, remember](const std::shared_ptr<ToolCall> &call) {
        remember(call);
        const QJsonObject params = objectFrom(u"{'messages':[{'role':'user','content':{'type':'"
                                              u"text','text':'what is six times seven?'}}],"
                                              u"'maxTokens':16}"_s);
        call->requestFromClient(
                u"sampling/createMessage"_s, params,
                [this, call](const QJsonObject &result, const QString &error) {
                    m_clientReplies.append({result, error});
                    if (!error.isEmpty())
                        call->finish(ToolResult::error(error));
                    else
                        call->finish(ToolResult::text(
                                result.value(u"content"_s).toObject().value(u"text"_s).toString()));
                },
                call->arguments().value(u"timeoutMs"_s).toInt(60000));
    };
    m_server->tools().add(ask);

    ToolDefinition mixed;
    mixed.name = u"mixed"_s;
    mixed.description = u"Returns text, audio and a resource link."_s;
    mixed.inputSchema = objectFrom(u"{'type':'object'}"_s);
    mixed.handler = [](const std::shared_ptr<ToolCall> &call) {
        ToolResult result = ToolResult::text(u"words"_s);
        result.content.append(
                objectFrom(u"{'type':'audio','data':'AAAA','mimeType':'audio/wav'}"_s));
        result.content.append(
                objectFrom(u"{'type':'resource_link','uri':'mem://status','name':'status'}"_s));
        call->finish(result);
    };
    m_server->tools().add(mixed);

    ResourceDefinition status;
    status.uri = u"mem://status"_s;
    status.name = u"status"_s;
    status.mimeType = u"text/plain"_s;
    status.read = [](const QString &uri, const QHash<QString, QString> &, ResourceReadDone done) {
        done(ResourceReadResult::success({QJsonObject{
                {u"uri"_s, uri}, {u"mimeType"_s, u"text/plain"_s}, {u"text"_s, u"ok"_s}}}));
    };
    m_server->resources().addResource(status);

    ResourceTemplateDefinition repoFile;
    repoFile.uriTemplate = u"repo://{owner}/tree/{+path}"_s;
    repoFile.name = u"repo-file"_s;
    repoFile.read = [this](const QString &uri, const QHash<QString, QString> &variables,
                           ResourceReadDone done) {
        m_lastVariables = variables;
        done(ResourceReadResult::success(
                {QJsonObject{{u"uri"_s, uri}, {u"text"_s, variables.value(u"path"_s)}}}));
    };
    repoFile.complete = [](const QString &argument, const QString &prefix) {
        if (argument != u"owner"_s)
            return QStringList();
        return filtered({u"alice"_s, u"albert"_s, u"bob"_s}, prefix);
    };
    m_server->resources().addTemplate(repoFile);

    ResourceTemplateDefinition log;
    log.uriTemplate = u"logs://{name}"_s;
    log.name = u"log"_s;
    log.read = [this](const QString &uri, const QHash<QString, QString> &variables,
                      ResourceReadDone done) {
        m_lastVariables = variables;
        done(ResourceReadResult::success(
                {QJsonObject{{u"uri"_s, uri}, {u"text"_s, variables.value(u"name"_s)}}}));
    };
    m_server->resources().addTemplate(log);

    PromptDefinition review;
    review.name = u"review"_s;
    review.description = u"Reviews code."_s;
    review.arguments = {{u"code"_s, u"the code"_s, true}, {u"style"_s, u"the tone"_s, false}};
    review.render = [](const QHash<QString, QString> &arguments, const QJsonObject &) {
        return QJsonArray{QJsonObject{
                {u"role"_s, u"user"_s},
                {u"content"_s,
                 QJsonObject{{u"type"_s, u"text"_s},
                             {u"text"_s,
                              u"Review (%1): %2"_s.arg(arguments.value(u"style"_s, u"plain"_s),
                                                       arguments.value(u"code"_s))}}}}};
    };
    review.complete = [](const QString &argument, const QString &prefix) {
        if (argument != u"style"_s)
            return QStringList();
        return filtered({u"concise"_s, u"careful"_s, u"casual"_s}, prefix);
    };
    m_server->prompts().add(review);

    PromptDefinition many;
    many.name = u"many"_s;
    many.arguments = {{u"n"_s, {}, false}};
    many.render = [](const QHash<QString, QString> &, const QJsonObject &) { return QJsonArray(); };
    many.complete = [](const QString &, const QString &prefix) {
        QStringList values;
        for (int i = 0; i < 150; ++i)
            values.append(prefix + QString::number(i));
        return values;
    };
    m_server->prompts().add(many);
}

void TestMcpServer::cleanup()
{
    m_lastCall.reset();
    m_server.reset();
    m_timerContext.reset();
}

Sent TestMcpServer::send(const std::shared_ptr<Session> &session, const QString &json)
{
    Sent sent;
    sent.exchange = std::make_shared<RecordingExchange>();
    sent.owed =
            m_server->handlePayload(session, jsonrpc::parsePayload(jsonText(json)), sent.exchange);
    return sent;
}

Sent TestMcpServer::sendMessage(const std::shared_ptr<Session> &session,
                                const QJsonValue &messageOrBatch)
{
    // Through the wire form, as a transport would hand it over.
    Sent sent;
    sent.exchange = std::make_shared<RecordingExchange>();
    sent.owed = m_server->handlePayload(
            session, jsonrpc::parsePayload(jsonrpc::serialize(messageOrBatch)), sent.exchange);
    return sent;
}

Sent TestMcpServer::request(const std::shared_ptr<Session> &session, const QJsonValue &id,
                            const QString &method, const QJsonObject &params)
{
    return sendMessage(session, jsonrpc::makeRequest(id, method, params));
}

std::shared_ptr<Session> TestMcpServer::openSession(RecordingChannel *channel)
{
    return m_server->openSession(u"test"_s, channel ? channel : &m_channel);
}

std::shared_ptr<Session> TestMcpServer::initialized(const QString &version,
                                                    RecordingChannel *channel)
{
    auto session = openSession(channel);
    if (!session)
        return session;
    const QJsonObject params{
            {u"protocolVersion"_s, version},
            {u"capabilities"_s, QJsonObject{{u"sampling"_s, QJsonObject{}}}},
            {u"clientInfo"_s, QJsonObject{{u"name"_s, u"tst"_s}, {u"version"_s, u"1"_s}}}};
    const Sent sent = request(session, u"init"_s, u"initialize"_s, params);
    if (errorCode(sent.response()) != 0 || !sent.owed)
        qWarning("initialize failed: %s", jsonrpc::serialize(sent.response()).constData());
    sendMessage(session, jsonrpc::makeNotification(u"notifications/initialized"_s));
    return session;
}

QJsonObject TestMcpServer::callTool(const std::shared_ptr<Session> &session, const QJsonValue &id,
                                    const QString &name, const QJsonObject &arguments,
                                    const QJsonObject &meta)
{
    QJsonObject params{{u"name"_s, name}, {u"arguments"_s, arguments}};
    if (!meta.isEmpty())
        params.insert(u"_meta"_s, meta);
    return request(session, id, u"tools/call"_s, params).response();
}

// ---------------------------------------------------------------------------------------------
// lifecycle

void TestMcpServer::initializeNegotiatesTheVersion_data()
{
    QTest::addColumn<QString>("requested");
    QTest::addColumn<QString>("negotiated");
    QTest::addColumn<bool>("serverTitle");

    QTest::newRow("2024-11-05") << u"2024-11-05"_s << u"2024-11-05"_s << false;
    QTest::newRow("2025-03-26") << u"2025-03-26"_s << u"2025-03-26"_s << false;
    QTest::newRow("2025-06-18") << u"2025-06-18"_s << u"2025-06-18"_s << true;
    QTest::newRow("2025-11-25") << u"2025-11-25"_s << u"2025-11-25"_s << true;
    QTest::newRow("unknown future") << u"2099-01-01"_s << u"2025-11-25"_s << true;
    QTest::newRow("unknown past") << u"2024-01-01"_s << u"2025-11-25"_s << true;
    QTest::newRow("not a date") << u"latest"_s << u"2025-11-25"_s << true;
}

void TestMcpServer::initializeNegotiatesTheVersion()
{
    QFETCH(QString, requested);
    QFETCH(QString, negotiated);
    QFETCH(bool, serverTitle);

    auto session = openSession();
    QVERIFY(!session->isInitialized());
    const QJsonObject params{{u"protocolVersion"_s, requested},
                             {u"capabilities"_s, QJsonObject{}},
                             {u"clientInfo"_s, QJsonObject{{u"name"_s, u"tst"_s}}}};
    const Sent sent = request(session, 1, u"initialize"_s, params);
    QVERIFY(sent.owed);
    const QJsonObject response = sent.response();
    QCOMPARE(response.value(u"id"_s), QJsonValue(1));
    QVERIFY2(!response.contains(u"error"_s), jsonrpc::serialize(response).constData());
    const QJsonObject result = resultOf(response);
    QCOMPARE(result.value(u"protocolVersion"_s).toString(), negotiated);
    QVERIFY(session->isInitialized());
    QCOMPARE(session->protocolVersion(), negotiated);

    const QJsonObject capabilities = result.value(u"capabilities"_s).toObject();
    QCOMPARE(capabilities.value(u"tools"_s).toObject().value(u"listChanged"_s), QJsonValue(true));
    QCOMPARE(capabilities.value(u"resources"_s).toObject().value(u"subscribe"_s), QJsonValue(true));
    QVERIFY(capabilities.value(u"prompts"_s).isObject());
    QVERIFY(capabilities.value(u"logging"_s).isObject());
    const QJsonObject serverInfo = result.value(u"serverInfo"_s).toObject();
    QCOMPARE(serverInfo.value(u"name"_s).toString(), u"container-mcp"_s);
    QVERIFY(!serverInfo.value(u"version"_s).toString().isEmpty());
    QCOMPARE(serverInfo.contains(u"title"_s), serverTitle);
    QCOMPARE(result.value(u"instructions"_s).toString(), u"Use the tools."_s);
}

void TestMcpServer::secondInitializeFails()
{
    auto session = initialized(u"2025-03-26"_s);
    QVERIFY(session->isInitialized());
    const QJsonObject params{{u"protocolVersion"_s, u"2025-11-25"_s},
                             {u"capabilities"_s, QJsonObject{}},
                             {u"clientInfo"_s, QJsonObject{{u"name"_s, u"again"_s}}}};
    const QJsonObject response = request(session, 2, u"initialize"_s, params).response();
    QCOMPARE(errorCode(response), -32600);
    QCOMPARE(response.value(u"id"_s), QJsonValue(2));
    QCOMPARE(session->protocolVersion(), u"2025-03-26"_s);
    QCOMPARE(session->clientInfo().value(u"name"_s).toString(), u"tst"_s);
}

void TestMcpServer::requestsBeforeInitializeFail_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<QJsonObject>("params");

    QTest::newRow("tools/list") << u"tools/list"_s << QJsonObject();
    QTest::newRow("tools/call") << u"tools/call"_s << QJsonObject{{u"name"_s, u"echo"_s}};
    QTest::newRow("resources/list") << u"resources/list"_s << QJsonObject();
    QTest::newRow("resources/read")
            << u"resources/read"_s << QJsonObject{{u"uri"_s, u"mem://status"_s}};
    QTest::newRow("prompts/list") << u"prompts/list"_s << QJsonObject();
    QTest::newRow("logging/setLevel")
            << u"logging/setLevel"_s << QJsonObject{{u"level"_s, u"info"_s}};
}

void TestMcpServer::requestsBeforeInitializeFail()
{
    QFETCH(QString, method);
    QFETCH(QJsonObject, params);

    auto session = openSession();
    const Sent sent = request(session, u"early"_s, method, params);
    QVERIFY(sent.owed);
    const QJsonObject response = sent.response();
    QCOMPARE(errorCode(response), -32600);
    QCOMPARE(response.value(u"id"_s), QJsonValue(u"early"_s));
    QCOMPARE(m_echoCalls, 0);
    QVERIFY(!session->isInitialized());
}

void TestMcpServer::pingWorksBeforeInitialize()
{
    auto session = openSession();
    const Sent sent = request(session, 1, u"ping"_s);
    QVERIFY(sent.owed);
    const QJsonObject response = sent.response();
    QVERIFY2(!response.contains(u"error"_s), jsonrpc::serialize(response).constData());
    QCOMPARE(response.value(u"result"_s), QJsonValue(QJsonObject()));
    QCOMPARE(response.value(u"id"_s), QJsonValue(1));

    // ... and after it.
    auto ready = initialized(u"2025-11-25"_s);
    QCOMPARE(request(ready, 2, u"ping"_s).response().value(u"result"_s), QJsonValue(QJsonObject()));
}

void TestMcpServer::maxSessions()
{
    m_server->setMaxSessions(1);
    QSignalSpy opened(m_server.get(), &McpServer::sessionOpened);
    auto first = openSession();
    QVERIFY(first);
    QCOMPARE(m_server->sessionCount(), 1);
    QVERIFY(!openSession());
    QCOMPARE(m_server->sessionCount(), 1);
    QCOMPARE(opened.count(), 1);

    m_server->closeSession(first->id(), kClose);
    QCOMPARE(m_server->sessionCount(), 0);
    QVERIFY(openSession());
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC handling

void TestMcpServer::unknownMethod()
{
    auto session = initialized(u"2025-11-25"_s);
    const QJsonObject response = request(session, 3, u"tools/explode"_s).response();
    QCOMPARE(errorCode(response), -32601);
    QCOMPARE(response.value(u"id"_s), QJsonValue(3));
    QVERIFY(errorMessage(response).contains(u"tools/explode"_s));
}

void TestMcpServer::paramsViolatingTheSchema_data()
{
    QTest::addColumn<bool>("initialize");
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("path");

    QTest::newRow("initialize without clientInfo")
            << false
            << u"{'jsonrpc':'2.0','id':1,'method':'initialize','params':{'protocolVersion':'2025-11-25','capabilities':{}}}"_s
            << u"clientInfo"_s;
    QTest::newRow("initialize, clientInfo.name a number")
            << false
            << u"{'jsonrpc':'2.0','id':1,'method':'initialize','params':{'protocolVersion':'2025-11-25','capabilities':{},'clientInfo':{'name':3}}}"_s
            << u"params.clientInfo.name"_s;
    QTest::newRow("tools/call name a number")
            << true << u"{'jsonrpc':'2.0','id':1,'method':'tools/call','params':{'name':5}}"_s
            << u"params.name"_s;
    QTest::newRow("tools/call without params")
            << true << u"{'jsonrpc':'2.0','id':1,'method':'tools/call'}"_s << u"name"_s;
    QTest::newRow("tools/call arguments an array")
            << true
            << u"{'jsonrpc':'2.0','id':1,'method':'tools/call','params':{'name':'echo','arguments':[]}}"_s
            << u"params.arguments"_s;
    QTest::newRow("tools/call progressToken a bool")
            << true
            << u"{'jsonrpc':'2.0','id':1,'method':'tools/call','params':{'name':'echo','arguments':{'text':'x'},'_meta':{'progressToken':true}}}"_s
            << u"params._meta.progressToken"_s;
    QTest::newRow("params an array")
            << true << u"{'jsonrpc':'2.0','id':1,'method':'tools/list','params':[1]}"_s
            << u"params"_s;
    QTest::newRow("setLevel unknown level")
            << true
            << u"{'jsonrpc':'2.0','id':1,'method':'logging/setLevel','params':{'level':'loud'}}"_s
            << u"params.level"_s;
    QTest::newRow("resources/read without uri")
            << true << u"{'jsonrpc':'2.0','id':1,'method':'resources/read','params':{}}"_s
            << u"uri"_s;
    QTest::newRow("tools/list cursor a number")
            << true << u"{'jsonrpc':'2.0','id':1,'method':'tools/list','params':{'cursor':2}}"_s
            << u"params.cursor"_s;
    QTest::newRow("prompts/get argument not a string")
            << true
            << u"{'jsonrpc':'2.0','id':1,'method':'prompts/get','params':{'name':'review','arguments':{'code':5}}}"_s
            << u"params.arguments.code"_s;
    QTest::newRow("completion ref type unknown")
            << true
            << u"{'jsonrpc':'2.0','id':1,'method':'completion/complete','params':{'ref':{'type':'ref/tool'},'argument':{'name':'a','value':''}}}"_s
            << u"params.ref.type"_s;
}

void TestMcpServer::paramsViolatingTheSchema()
{
    QFETCH(bool, initialize);
    QFETCH(QString, json);
    QFETCH(QString, path);

    auto session = initialize ? initialized(u"2025-06-18"_s) : openSession();
    const Sent sent = send(session, json);
    QVERIFY(sent.owed);
    const QJsonObject response = sent.response();
    QCOMPARE(errorCode(response), -32602);
    QCOMPARE(response.value(u"id"_s), QJsonValue(1));
    QVERIFY2(errorMessage(response).contains(path), qPrintable(errorMessage(response)));
    QCOMPARE(m_echoCalls, 0);
    if (!initialize)
        QVERIFY(!session->isInitialized());
}

void TestMcpServer::parseErrorAndInvalidMessage()
{
    auto session = initialized(u"2025-11-25"_s);
    const Sent broken = send(session, u"{'jsonrpc':'2.0','id':1,"_s);
    QVERIFY(broken.owed);
    QCOMPARE(errorCode(broken.response()), -32700);
    QVERIFY(broken.response().value(u"id"_s).isNull());

    const Sent invalid = send(session, u"{'jsonrpc':'2.0','id':8,'method':'ping','params':'x'}"_s);
    QVERIFY(invalid.owed);
    QCOMPARE(errorCode(invalid.response()), -32600);
    QCOMPARE(invalid.response().value(u"id"_s), QJsonValue(8));
    QVERIFY(errorMessage(invalid.response()).contains(u"params"_s));
}

void TestMcpServer::notificationsProduceNoReply()
{
    auto session = initialized(u"2025-11-25"_s);
    const QStringList notifications{
            u"{'jsonrpc':'2.0','method':'notifications/initialized'}"_s,
            u"{'jsonrpc':'2.0','method':'notifications/roots/list_changed'}"_s,
            u"{'jsonrpc':'2.0','method':'no/such/notification','params':{'a':1}}"_s,
            u"{'jsonrpc':'2.0','method':'notifications/cancelled','params':{'requestId':12345}}"_s,
            u"{'jsonrpc':'2.0','method':'tools/list'}"_s, // a method's name, but no id: still a
                                                          // notification
            u"{'jsonrpc':'2.0','id':'cmcp-999','result':{}}"_s, // a response to nothing of ours
    };
    for (const QString &json : notifications) {
        const Sent sent = send(session, json);
        QVERIFY2(!sent.owed, qPrintable(json));
        QVERIFY2(sent.exchange->completions.isEmpty(), qPrintable(json));
        QVERIFY2(sent.exchange->related.isEmpty(), qPrintable(json));
    }
    QVERIFY(m_channel.messages.isEmpty());

    // A batch of notifications alone is not answered either.
    auto batching = initialized(u"2025-03-26"_s);
    const Sent batch = send(batching,
                            u"[{'jsonrpc':'2.0','method':'notifications/initialized'},"
                            u"{'jsonrpc':'2.0','method':'x/y'}]"_s);
    QVERIFY(!batch.owed);
    QVERIFY(batch.exchange->completions.isEmpty());
}

void TestMcpServer::batchAcceptedFor20250326()
{
    auto session = initialized(u"2025-03-26"_s);
    const Sent sent = send(session,
                           u"["
                           u"{'jsonrpc':'2.0','id':1,'method':'ping'},"
                           u"{'jsonrpc':'2.0','id':2,'method':5},"
                           u"{'jsonrpc':'2.0','method':'notifications/initialized'},"
                           u"{'jsonrpc':'2.0','id':3,'method':'tools/"
                           u"call','params':{'name':'echo','arguments':{'text':'hi'}}},"
                           u"{'jsonrpc':'2.0','id':4,'method':'no/such'},"
                           u"{'jsonrpc':'2.0','id':5,'method':'tools/"
                           u"call','params':{'name':'echo','arguments':{}}},"
                           u"7,"
                           u"{'jsonrpc':'2.0','id':'six','method':'tools/list'}"
                           u"]"_s);
    QVERIFY(sent.owed);
    QCOMPARE(sent.exchange->completions.size(), 1);
    QVERIFY(sent.exchange->completions.first().isArray());
    const QJsonArray responses = sent.exchange->completions.first().toArray();
    QCOMPARE(responses.size(), 7);

    const QJsonValue ids[] = {1, 2, 3, 4, 5, QJsonValue::Null, u"six"_s};
    const int codes[] = {0, -32600, 0, -32601, -32602, -32600, 0};
    for (int i = 0; i < 7; ++i) {
        const QJsonObject response = responses.at(i).toObject();
        QCOMPARE(response.value(u"id"_s), ids[i]);
        QCOMPARE(errorCode(response), codes[i]);
        QCOMPARE(response.contains(u"result"_s), codes[i] == 0);
    }
    QCOMPARE(resultOf(responses.at(2).toObject()).value(u"content"_s).toArray().size(), 1);
    QCOMPARE(resultOf(responses.at(6).toObject()).value(u"tools"_s).toArray().size(), 7);
    QCOMPARE(m_echoCalls, 1);
}

void TestMcpServer::batchAnsweredOnceEveryMemberSettles()
{
    auto session = initialized(u"2025-03-26"_s);
    const Sent sent = send(session,
                           u"[{'jsonrpc':'2.0','id':'a','method':'tools/"
                           u"call','params':{'name':'slow','arguments':{'ms':30}}},"
                           u" {'jsonrpc':'2.0','id':'b','method':'ping'}]"_s);
    QVERIFY(sent.owed);
    QVERIFY(sent.exchange->completions.isEmpty()); // 'a' is still running
    QTRY_COMPARE_WITH_TIMEOUT(sent.exchange->completions.size(), 1, 5000);
    const QJsonArray responses = sent.exchange->completions.first().toArray();
    QCOMPARE(responses.size(), 2);
    QStringList ids;
    for (const QJsonValue &response : responses) {
        ids.append(response.toObject().value(u"id"_s).toString());
        QVERIFY(response.toObject().contains(u"result"_s));
    }
    ids.sort();
    QCOMPARE(ids, (QStringList{u"a"_s, u"b"_s}));
    QTest::qWait(50);
    QCOMPARE(sent.exchange->completions.size(), 1);
}

void TestMcpServer::batchRefused_data()
{
    QTest::addColumn<QString>("version");
    QTest::newRow("2024-11-05") << u"2024-11-05"_s;
    QTest::newRow("2025-06-18") << u"2025-06-18"_s;
    QTest::newRow("2025-11-25") << u"2025-11-25"_s;
    QTest::newRow("not initialized") << QString();
}

void TestMcpServer::batchRefused()
{
    QFETCH(QString, version);
    auto session = version.isEmpty() ? openSession() : initialized(version);
    const Sent sent = send(
            session,
            u"[{'jsonrpc':'2.0','id':1,'method':'ping'},"
            u" {'jsonrpc':'2.0','id':2,'method':'tools/call','params':{'name':'echo','arguments':{'text':'x'}}}]"_s);
    QVERIFY(sent.owed);
    QCOMPARE(sent.exchange->completions.size(), 1);
    QVERIFY2(sent.exchange->completions.first().isObject(),
             "a refused batch is answered with one error, not an array");
    const QJsonObject response = sent.response();
    QCOMPARE(errorCode(response), -32600);
    QVERIFY(response.value(u"id"_s).isNull());
    QVERIFY(errorMessage(response).contains(u"batch"_s));
    QCOMPARE(m_echoCalls, 0); // no member was run
}

void TestMcpServer::initializeInsideABatchRefused()
{
    // On a session that speaks 2025-03-26 ...
    auto session = initialized(u"2025-03-26"_s);
    const Sent sent = send(session,
                           u"[{'jsonrpc':'2.0','id':1,'method':'ping'},"
                           u" {'jsonrpc':'2.0','id':2,'method':'initialize','params':{'"
                           u"protocolVersion':'2025-03-26',"
                           u"'capabilities':{},'clientInfo':{'name':'x'}}}]"_s);
    QVERIFY(sent.owed);
    const QJsonObject response = sent.response();
    QCOMPARE(errorCode(response), -32600);
    QVERIFY(errorMessage(response).contains(u"initialize"_s));
    QCOMPARE(session->clientInfo().value(u"name"_s).toString(), u"tst"_s);

    // ... and as the first payload of a new session.
    auto fresh = openSession();
    const Sent first = send(fresh,
                            u"[{'jsonrpc':'2.0','id':1,'method':'initialize','params':{'"
                            u"protocolVersion':'2025-03-26',"
                            u"'capabilities':{},'clientInfo':{'name':'x'}}}]"_s);
    QVERIFY(first.owed);
    QCOMPARE(errorCode(first.response()), -32600);
    QVERIFY(!fresh->isInitialized());
}

void TestMcpServer::emptyBatchRefused()
{
    for (const QString &version : {u"2025-03-26"_s, u"2025-11-25"_s}) {
        auto session = initialized(version);
        const Sent sent = send(session, u"[]"_s);
        QVERIFY(sent.owed);
        QCOMPARE(sent.exchange->completions.size(), 1);
        QVERIFY(sent.exchange->completions.first().isObject());
        QCOMPARE(errorCode(sent.response()), -32600);
        QVERIFY(sent.response().value(u"id"_s).isNull());
    }
}

void TestMcpServer::reusedIdInFlightRefused()
{
    auto session = initialized(u"2025-11-25"_s);
    const Sent first =
            request(session, 5, u"tools/call"_s,
                    {{u"name"_s, u"slow"_s}, {u"arguments"_s, QJsonObject{{u"ms"_s, 600000}}}});
    QVERIFY(first.owed);
    QVERIFY(first.exchange->completions.isEmpty());
    QVERIFY(m_lastCall);
    QVERIFY(session->isRequestInFlight(jsonrpc::idKey(5)));

    const Sent reused = request(session, 5, u"ping"_s);
    QVERIFY(reused.owed);
    QCOMPARE(errorCode(reused.response()), -32600);
    QCOMPARE(reused.response().value(u"id"_s), QJsonValue(5));
    QVERIFY(first.exchange->completions.isEmpty());
    QVERIFY(!m_lastCall->isCancelled());

    // The string "5" is another id.
    const Sent other = request(session, u"5"_s, u"ping"_s);
    QVERIFY(!other.response().contains(u"error"_s));
    QCOMPARE(other.response().value(u"id"_s), QJsonValue(u"5"_s));

    m_lastCall->finish(ToolResult::text(u"first"_s));
    const QJsonObject response = first.response();
    QCOMPARE(response.value(u"id"_s), QJsonValue(5));
    QCOMPARE(firstText(resultOf(response)), u"first"_s);
    QVERIFY(!session->isRequestInFlight(jsonrpc::idKey(5)));
}

void TestMcpServer::lateAnswerAfterCancelAndReuseIsDropped()
{
    ResourceReadDone pending;
    m_server->resources().addResource(
            {u"test://deferred"_s,
             u"Deferred"_s,
             {},
             {},
             u"text/plain"_s,
             std::nullopt,
             [&pending](const QString &, const QHash<QString, QString> &, ResourceReadDone done) {
                 pending = std::move(done);
             }});
    auto session = initialized(u"2025-11-25"_s);
    auto contents = [](const QString &text) {
        return ResourceReadResult::success(
                {QJsonObject{{u"uri"_s, u"test://deferred"_s}, {u"text"_s, text}}});
    };

    const Sent first = request(session, 7, u"resources/read"_s, {{u"uri"_s, u"test://deferred"_s}});
    QVERIFY(pending);
    ResourceReadDone firstDone = std::move(pending);
    pending = nullptr;
    send(session,
         u"{'jsonrpc':'2.0','method':'notifications/cancelled','params':{'requestId':7}}"_s);
    // The client may use the id again once its request is settled (here: cancelled).
    const Sent second =
            request(session, 7, u"resources/read"_s, {{u"uri"_s, u"test://deferred"_s}});
    QVERIFY(pending);

    firstDone(contents(u"stale"_s));
    QVERIFY2(second.exchange->completions.isEmpty(), "the cancelled read answered the new request");
    pending(contents(u"fresh"_s));
    const QJsonArray read = resultOf(second.response()).value(u"contents"_s).toArray();
    QCOMPARE(read.first().toObject().value(u"text"_s).toString(), u"fresh"_s);
    QCOMPARE(first.exchange->completions.size(), 1);
    QVERIFY(first.exchange->completions.first().isUndefined());
}

void TestMcpServer::errorResponseWithNullIdIsNotAnswered()
{
    auto session = initialized(u"2025-11-25"_s);
    const Sent sent =
            send(session,
                 u"{'jsonrpc':'2.0','id':null,'error':{'code':-32700,'message':'unreadable'}}"_s);
    QVERIFY(!sent.owed);
    QVERIFY(sent.exchange->completions.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// tools

void TestMcpServer::toolsListPagination()
{
    m_server->setPageSize(2);
    auto session = initialized(u"2025-11-25"_s);
    QStringList expected;
    for (const ToolDefinition &tool : m_server->tools().tools())
        expected.append(tool.name);
    QCOMPARE(expected.size(), 7);

    QStringList seen;
    QJsonObject params;
    int pages = 0;
    for (;;) {
        const QJsonObject response =
                request(session, pages + 1, u"tools/list"_s, params).response();
        QVERIFY2(!response.contains(u"error"_s), jsonrpc::serialize(response).constData());
        const QJsonObject result = resultOf(response);
        const QJsonArray tools = result.value(u"tools"_s).toArray();
        QVERIFY(tools.size() <= 2);
        seen += toolNames(tools);
        ++pages;
        QVERIFY(pages <= 4);
        if (!result.contains(u"nextCursor"_s))
            break;
        QVERIFY(result.value(u"nextCursor"_s).isString());
        params = {{u"cursor"_s, result.value(u"nextCursor"_s)}};
    }
    QCOMPARE(pages, 4);
    QCOMPARE(seen, expected);
}

void TestMcpServer::toolsListForgedCursor_data()
{
    QTest::addColumn<QString>("cursor");
    QTest::newRow("garbage") << u"not-a-cursor"_s;
    QTest::newRow("empty") << QString();
    QTest::newRow("past the end") << QString::fromLatin1(
            QByteArray("o:999").toBase64(QByteArray::Base64UrlEncoding));
    QTest::newRow("negative") << QString::fromLatin1(
            QByteArray("o:-2").toBase64(QByteArray::Base64UrlEncoding));
    QTest::newRow("not a number") << QString::fromLatin1(
            QByteArray("o:two").toBase64(QByteArray::Base64UrlEncoding));
}

void TestMcpServer::toolsListForgedCursor()
{
    QFETCH(QString, cursor);
    m_server->setPageSize(2);
    auto session = initialized(u"2025-11-25"_s);
    const QJsonObject response =
            request(session, 1, u"tools/list"_s, {{u"cursor"_s, cursor}}).response();
    QCOMPARE(errorCode(response), -32602);
    QVERIFY(errorMessage(response).contains(u"cursor"_s));
}

void TestMcpServer::toolsListFieldsByVersion_data()
{
    QTest::addColumn<QString>("version");
    QTest::addColumn<bool>("structured"); // title and outputSchema
    QTest::addColumn<bool>("annotations");

    QTest::newRow("2024-11-05") << u"2024-11-05"_s << false << false;
    QTest::newRow("2025-03-26") << u"2025-03-26"_s << false << true;
    QTest::newRow("2025-06-18") << u"2025-06-18"_s << true << true;
    QTest::newRow("2025-11-25") << u"2025-11-25"_s << true << true;
}

void TestMcpServer::toolsListFieldsByVersion()
{
    QFETCH(QString, version);
    QFETCH(bool, structured);
    QFETCH(bool, annotations);

    auto session = initialized(version);
    const QJsonArray tools =
            resultOf(request(session, 1, u"tools/list"_s).response()).value(u"tools"_s).toArray();
    QCOMPARE(tools.size(), 7);
    const QJsonObject echo = tools.at(0).toObject();
    QCOMPARE(echo.value(u"name"_s).toString(), u"echo"_s);
    QCOMPARE(echo.value(u"description"_s).toString(), u"Returns its text."_s);
    QCOMPARE(echo.value(u"inputSchema"_s).toObject(),
             m_server->tools().find(u"echo"_s)->inputSchema);
    QCOMPARE(echo.contains(u"title"_s), structured);
    QCOMPARE(echo.contains(u"outputSchema"_s), structured);
    QCOMPARE(echo.contains(u"annotations"_s), annotations);
    if (structured) {
        QCOMPARE(echo.value(u"title"_s).toString(), u"Echo Tool"_s);
        QCOMPARE(echo.value(u"outputSchema"_s).toObject(),
                 *m_server->tools().find(u"echo"_s)->outputSchema);
    }
    if (annotations) {
        const QJsonObject hints = echo.value(u"annotations"_s).toObject();
        QCOMPARE(hints.value(u"readOnlyHint"_s), QJsonValue(true));
        QCOMPARE(hints.value(u"destructiveHint"_s), QJsonValue(false));
    }
    // A tool without an output schema never shows one.
    QVERIFY(!tools.at(1).toObject().contains(u"outputSchema"_s));
}

void TestMcpServer::unknownTool()
{
    auto session = initialized(u"2025-11-25"_s);
    const QJsonObject response = callTool(session, 1, u"no_such_tool"_s, {});
    QCOMPARE(errorCode(response), -32602);
    QVERIFY(errorMessage(response).contains(u"no_such_tool"_s));
}

void TestMcpServer::invalidArguments_data()
{
    QTest::addColumn<QString>("version");
    QTest::addColumn<bool>("asToolError");

    QTest::newRow("2024-11-05") << u"2024-11-05"_s << false;
    QTest::newRow("2025-03-26") << u"2025-03-26"_s << false;
    QTest::newRow("2025-06-18") << u"2025-06-18"_s << false;
    QTest::newRow("2025-11-25") << u"2025-11-25"_s << true;
}

void TestMcpServer::invalidArguments()
{
    QFETCH(QString, version);
    QFETCH(bool, asToolError);

    auto session = initialized(version);
    const QJsonObject response = callTool(session, 1, u"echo"_s, {{u"text"_s, 42}});
    QCOMPARE(response.value(u"id"_s), QJsonValue(1));
    if (asToolError) {
        QVERIFY2(!response.contains(u"error"_s), jsonrpc::serialize(response).constData());
        const QJsonObject result = resultOf(response);
        QCOMPARE(result.value(u"isError"_s), QJsonValue(true));
        QVERIFY2(firstText(result).contains(u"arguments.text"_s), qPrintable(firstText(result)));
    } else {
        QCOMPARE(errorCode(response), -32602);
        QVERIFY2(errorMessage(response).contains(u"arguments.text"_s),
                 qPrintable(errorMessage(response)));
    }
    QCOMPARE(m_echoCalls, 0);

    // A missing required argument, an unexpected one: same treatment.
    const QJsonObject missing = callTool(session, 2, u"echo"_s, {});
    const QJsonObject extra =
            callTool(session, 3, u"echo"_s, {{u"text"_s, u"x"_s}, {u"loud"_s, true}});
    for (const QJsonObject &other : {missing, extra}) {
        if (asToolError)
            QCOMPARE(resultOf(other).value(u"isError"_s), QJsonValue(true));
        else
            QCOMPARE(errorCode(other), -32602);
    }
    QCOMPARE(m_echoCalls, 0);
}

void TestMcpServer::structuredContentByVersion_data()
{
    QTest::addColumn<QString>("version");
    QTest::addColumn<bool>("structured");

    QTest::newRow("2024-11-05") << u"2024-11-05"_s << false;
    QTest::newRow("2025-03-26") << u"2025-03-26"_s << false;
    QTest::newRow("2025-06-18") << u"2025-06-18"_s << true;
    QTest::newRow("2025-11-25") << u"2025-11-25"_s << true;
}

void TestMcpServer::structuredContentByVersion()
{
    QFETCH(QString, version);
    QFETCH(bool, structured);

    auto session = initialized(version);
    const QJsonObject response = callTool(session, u"c1"_s, u"echo"_s, {{u"text"_s, u"hi"_s}});
    QVERIFY2(!response.contains(u"error"_s), jsonrpc::serialize(response).constData());
    QCOMPARE(response.value(u"id"_s), QJsonValue(u"c1"_s));
    const QJsonObject result = resultOf(response);
    QCOMPARE(result.contains(u"structuredContent"_s), structured);
    if (structured)
        QCOMPARE(result.value(u"structuredContent"_s).toObject(),
                 (QJsonObject{{u"echo"_s, u"hi"_s}}));
    // Every revision gets the same data as text.
    QCOMPARE(QJsonDocument::fromJson(firstText(result).toUtf8()).object(),
             (QJsonObject{{u"echo"_s, u"hi"_s}}));
    QVERIFY(!result.contains(u"isError"_s));
    QCOMPARE(m_echoCalls, 1);
}

void TestMcpServer::outputSchemaViolation()
{
    for (const QString &version : {u"2025-06-18"_s, u"2025-11-25"_s}) {
        auto session = initialized(version);
        const QJsonObject response = callTool(session, 1, u"broken"_s, {});
        QCOMPARE(errorCode(response), -32603);
        QVERIFY2(errorMessage(response).contains(u"structuredContent.count"_s),
                 qPrintable(errorMessage(response)));
        QVERIFY(!response.contains(u"result"_s));
    }
}

void TestMcpServer::contentTypesByVersion_data()
{
    QTest::addColumn<QString>("version");
    QTest::addColumn<QStringList>("types");

    QTest::newRow("2024-11-05") << u"2024-11-05"_s << QStringList{u"text"_s};
    QTest::newRow("2025-03-26") << u"2025-03-26"_s << QStringList{u"text"_s, u"audio"_s};
    QTest::newRow("2025-06-18") << u"2025-06-18"_s
                                << QStringList{u"text"_s, u"audio"_s, u"resource_link"_s};
    QTest::newRow("2025-11-25") << u"2025-11-25"_s
                                << QStringList{u"text"_s, u"audio"_s, u"resource_link"_s};
}

void TestMcpServer::contentTypesByVersion()
{
    QFETCH(QString, version);
    QFETCH(QStringList, types);

    auto session = initialized(version);
    const QJsonObject response = callTool(session, 1, u"mixed"_s, {});
    QStringList got;
    for (const QJsonValue &block : resultOf(response).value(u"content"_s).toArray())
        got.append(block.toObject().value(u"type"_s).toString());
    QCOMPARE(got, types);
}

void TestMcpServer::asyncToolCall()
{
    auto session = initialized(u"2025-11-25"_s);
    const Sent sent =
            request(session, 1, u"tools/call"_s,
                    {{u"name"_s, u"slow"_s}, {u"arguments"_s, QJsonObject{{u"ms"_s, 20}}}});
    QVERIFY(sent.owed);
    QVERIFY(sent.exchange->completions.isEmpty());
    QCOMPARE(session->requestsInFlight(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(sent.exchange->completions.size(), 1, 5000);
    QCOMPARE(firstText(resultOf(sent.response())), u"slept"_s);
    QCOMPARE(session->requestsInFlight(), 0);
}

void TestMcpServer::progress_data()
{
    QTest::addColumn<QJsonValue>("token");
    QTest::newRow("string token") << QJsonValue(u"tok-1"_s);
    QTest::newRow("integer token") << QJsonValue(42);
    QTest::newRow("no token") << QJsonValue(QJsonValue::Undefined);
}

void TestMcpServer::progress()
{
    QFETCH(QJsonValue, token);

    auto session = initialized(u"2025-11-25"_s);
    QJsonObject params{{u"name"_s, u"progress"_s}, {u"arguments"_s, QJsonObject{}}};
    if (!token.isUndefined())
        params.insert(u"_meta"_s, QJsonObject{{u"progressToken"_s, token}});
    const Sent sent = request(session, 1, u"tools/call"_s, params);
    QCOMPARE(firstText(resultOf(sent.response())), u"done"_s);

    const QList<QJsonObject> notifications =
            sent.exchange->relatedWithMethod(u"notifications/progress"_s);
    QCOMPARE(sent.exchange->related.size(), notifications.size());
    QVERIFY(m_channel.messages.isEmpty());
    if (token.isUndefined()) {
        QVERIFY(notifications.isEmpty());
        return;
    }
    QList<double> values;
    for (const QJsonObject &notification : notifications) {
        const QJsonObject p = notification.value(u"params"_s).toObject();
        QCOMPARE(p.value(u"progressToken"_s), token);
        QCOMPARE(p.value(u"total"_s).toDouble(), 3.0);
        values.append(p.value(u"progress"_s).toDouble());
    }
    QCOMPARE(values, (QList<double>{1, 2, 3}));
    QCOMPARE(notifications.at(1).value(u"params"_s).toObject().value(u"message"_s).toString(),
             u"half way"_s);
}

// The admin channel and the audit log see every call: started once, finished once, with the
// outcome, and finished before the response reaches the transport.
void TestMcpServer::callRecordsEveryOutcome()
{
    QList<ToolCallRecord> started;
    QList<ToolCallRecord> finished;
    QList<bool> hadResult;
    connect(m_server.get(), &McpServer::toolCallStarted, this,
            [&](const ToolCallRecord &call) { started.append(call); });
    connect(m_server.get(), &McpServer::toolCallFinished, this,
            [&](const ToolCallRecord &call, const ToolResult *result) {
                finished.append(call);
                hadResult.append(result != nullptr);
            });

    auto session = initialized(u"2025-11-25"_s);
    callTool(session, 1, u"echo"_s, {{u"text"_s, u"hi"_s}});
    callTool(session, 2, u"echo"_s, {{u"wrong"_s, 1}});
    callTool(session, 3, u"no_such_tool"_s, {});
    callTool(session, 4, u"broken"_s, {});
    const Sent slow =
            request(session, 5, u"tools/call"_s,
                    {{u"name"_s, u"slow"_s}, {u"arguments"_s, QJsonObject{{u"ms"_s, 5000}}}});
    QCOMPARE(finished.size(), 4);
    send(session,
         u"{'jsonrpc':'2.0','method':'notifications/cancelled','params':{'requestId':5,'reason':'stop'}}"_s);

    QCOMPARE(started.size(), 5);
    QCOMPARE(finished.size(), 5);
    const QList<ToolCallOutcome> expected{
            ToolCallOutcome::Succeeded, ToolCallOutcome::InvalidArguments,
            ToolCallOutcome::UnknownTool, ToolCallOutcome::BrokeOutputSchema,
            ToolCallOutcome::Cancelled};
    for (int i = 0; i < 5; ++i) {
        QCOMPARE(finished[i].outcome, expected[i]);
        QCOMPARE(finished[i].callId, started[i].callId);
        QCOMPARE(finished[i].sessionId, session->id());
        QVERIFY(finished[i].durationMs >= 0);
    }
    QVERIFY(started[0].callId < started[1].callId);
    QCOMPARE(started[0].tool, u"echo"_s);
    QCOMPARE(started[0].arguments.value(u"text"_s).toString(), u"hi"_s);
    QCOMPARE(hadResult, (QList<bool>{true, false, false, true, false}));
    QVERIFY(finished[1].detail.contains(u"text"_s));
    QCOMPARE(finished[4].detail, u"stop"_s);
    QCOMPARE(toolCallOutcomeName(ToolCallOutcome::InvalidArguments), u"invalid_arguments"_s);

    // Finished is emitted before the transport gets the response.
    auto exchange = std::make_shared<RecordingExchange>();
    int completionsSeen = -1;
    connect(m_server.get(), &McpServer::toolCallFinished, this,
            [&completionsSeen, exchange](const ToolCallRecord &, const ToolResult *) {
                completionsSeen = int(exchange->completions.size());
            });
    m_server->handlePayload(
            session,
            jsonrpc::parsePayload(jsonText(
                    u"{'jsonrpc':'2.0','id':9,'method':'tools/call','params':{'name':'echo','arguments':{'text':'x'}}}"_s)),
            exchange);
    QCOMPARE(completionsSeen, 0);
    QCOMPARE(exchange->completions.size(), 1);
    Q_UNUSED(slow);
}

// The audit log with AUDIT_REQUIRED: a call whose start cannot be recorded never runs, and a call
// whose end cannot be recorded returns the reason instead of its result.
void TestMcpServer::failClosedCheckRefusesCalls()
{
    QString failingAt; // "started" or "finished": the observer's write that fails
    QString lastRecordState;
    int finishedRecords = 0;
    connect(m_server.get(), &McpServer::toolCallStarted, this, [&](const ToolCallRecord &) {
        lastRecordState = failingAt == u"started"_s ? u"disk full"_s : QString();
    });
    connect(m_server.get(), &McpServer::toolCallFinished, this,
            [&](const ToolCallRecord &, const ToolResult *) {
                ++finishedRecords;
                lastRecordState = failingAt == u"finished"_s ? u"disk full"_s : QString();
            });
    m_server->setFailClosedCheck([&lastRecordState] { return lastRecordState; });
    auto session = initialized(u"2025-11-25"_s);

    QJsonObject result = resultOf(callTool(session, 1, u"echo"_s, {{u"text"_s, u"hi"_s}}));
    QVERIFY(!result.value(u"isError"_s).toBool());
    QCOMPARE(result.value(u"structuredContent"_s).toObject().value(u"echo"_s).toString(), u"hi"_s);

    for (const QString &stage : {u"started"_s, u"finished"_s}) {
        failingAt = stage;
        result = resultOf(callTool(session, 2, u"echo"_s, {{u"text"_s, u"hi"_s}}));
        QVERIFY2(result.value(u"isError"_s).toBool(), qPrintable(stage));
        QCOMPARE(firstText(result), u"disk full"_s);
        QVERIFY(!result.contains(u"structuredContent"_s));
    }
    QCOMPARE(finishedRecords, 3); // the refused call is recorded as failed too
    m_server->setFailClosedCheck({});
}

// With group commit the audit log syncs records later: no answer of any kind (a result, invalid
// arguments, an unknown tool) leaves before the observer says the records are durable, and a
// sync that failed turns the result into the refusal.
void TestMcpServer::answersWaitForDurableRecords()
{
    std::vector<std::function<void()>> waiting;
    m_server->setRecordDurabilityWait(
            [&waiting](std::function<void()> then) { waiting.push_back(std::move(then)); });
    QString syncFailure;
    m_server->setFailClosedCheck([&syncFailure] { return syncFailure; });
    auto session = initialized(u"2025-11-25"_s);

    const Sent ok =
            request(session, 1, u"tools/call"_s,
                    {{u"name"_s, u"echo"_s}, {u"arguments"_s, QJsonObject{{u"text"_s, u"hi"_s}}}});
    const Sent unknown = request(session, 2, u"tools/call"_s, {{u"name"_s, u"no-such-tool"_s}});
    const Sent invalid =
            request(session, 3, u"tools/call"_s,
                    {{u"name"_s, u"echo"_s}, {u"arguments"_s, QJsonObject{{u"text"_s, 7}}}});
    QCOMPARE(waiting.size(), size_t(3));
    for (const Sent *sent : {&ok, &unknown, &invalid})
        QVERIFY(sent->exchange->completions.isEmpty());

    for (const std::function<void()> &then : waiting)
        then();
    waiting.clear();
    QCOMPARE(resultOf(ok.response()).value(u"structuredContent"_s).toObject().value(u"echo"_s),
             u"hi"_s);
    QVERIFY(unknown.response().contains(u"error"_s));
    QVERIFY(resultOf(invalid.response()).value(u"isError"_s).toBool());

    const Sent unsynced =
            request(session, 4, u"tools/call"_s,
                    {{u"name"_s, u"echo"_s}, {u"arguments"_s, QJsonObject{{u"text"_s, u"hi"_s}}}});
    QCOMPARE(waiting.size(), size_t(1));
    syncFailure = u"cannot flush the audit log"_s;
    waiting.front()();
    const QJsonObject refused = resultOf(unsynced.response());
    QVERIFY(refused.value(u"isError"_s).toBool());
    QCOMPARE(firstText(refused), syncFailure);
    QVERIFY(!refused.contains(u"structuredContent"_s));

    m_server->setRecordDurabilityWait({});
    m_server->setFailClosedCheck({});
}

void TestMcpServer::cancellation()
{
    auto session = initialized(u"2025-11-25"_s);
    const Sent sent = request(session, 7, u"tools/call"_s,
                              {{u"name"_s, u"slow"_s},
                               {u"arguments"_s, QJsonObject{{u"ms"_s, 30}}},
                               {u"_meta"_s, QJsonObject{{u"progressToken"_s, u"p"_s}}}});
    QVERIFY(sent.owed);
    QVERIFY(m_lastCall);
    const std::shared_ptr<ToolCall> call = m_lastCall;

    const Sent cancel = send(session,
                             u"{'jsonrpc':'2.0','method':'notifications/cancelled',"
                             u"'params':{'requestId':7,'reason':'user pressed stop'}}"_s);
    QVERIFY(!cancel.owed);
    QVERIFY(cancel.exchange->completions.isEmpty());

    QCOMPARE(m_cancelReasons, QStringList{u"user pressed stop"_s});
    QVERIFY(call->isCancelled());
    QVERIFY(!session->isRequestInFlight(jsonrpc::idKey(7)));
    // The request's exchange is settled with nothing to send.
    QCOMPARE(sent.exchange->completions.size(), 1);
    QVERIFY(sent.exchange->completions.first().isUndefined());

    // Whatever the tool still does goes nowhere: late progress, late log, late finish, the timer.
    call->reportProgress(1);
    call->log(LogLevel::Emergency, u"late"_s);
    call->finish(ToolResult::text(u"late"_s));
    QVERIFY(!call->isFinished()); // ignored, not merely unanswerable
    QTest::qWait(60);
    QCOMPARE(sent.exchange->completions.size(), 1);
    QVERIFY(sent.exchange->related.isEmpty());
    QVERIFY(m_channel.messages.isEmpty());
    QCOMPARE(m_cancelReasons.size(), 1);

    // Cancelling again, or cancelling what is not in flight, changes nothing.
    send(session,
         u"{'jsonrpc':'2.0','method':'notifications/cancelled','params':{'requestId':7}}"_s);
    QCOMPARE(m_cancelReasons.size(), 1);
    QCOMPARE(sent.exchange->completions.size(), 1);

    // A cancellation that names the string '7' does not touch the numeric id 7.
    const Sent second =
            request(session, 8, u"tools/call"_s,
                    {{u"name"_s, u"slow"_s}, {u"arguments"_s, QJsonObject{{u"ms"_s, 20}}}});
    send(session,
         u"{'jsonrpc':'2.0','method':'notifications/cancelled','params':{'requestId':'8'}}"_s);
    QVERIFY(!m_lastCall->isCancelled());
    QTRY_COMPARE_WITH_TIMEOUT(second.exchange->completions.size(), 1, 5000);
    QCOMPARE(firstText(resultOf(second.response())), u"slept"_s);
}

void TestMcpServer::logLevelFilters_data()
{
    QTest::addColumn<QString>("level");
    QTest::addColumn<QStringList>("expected");

    QTest::newRow("no level set") << QString()
                                  << QStringList{u"debug"_s, u"info"_s, u"warning"_s, u"error"_s};
    QTest::newRow("debug") << u"debug"_s
                           << QStringList{u"debug"_s, u"info"_s, u"warning"_s, u"error"_s};
    QTest::newRow("info") << u"info"_s << QStringList{u"info"_s, u"warning"_s, u"error"_s};
    QTest::newRow("notice") << u"notice"_s << QStringList{u"warning"_s, u"error"_s};
    QTest::newRow("warning") << u"warning"_s << QStringList{u"warning"_s, u"error"_s};
    QTest::newRow("error") << u"error"_s << QStringList{u"error"_s};
    QTest::newRow("emergency") << u"emergency"_s << QStringList();
}

void TestMcpServer::logLevelFilters()
{
    QFETCH(QString, level);
    QFETCH(QStringList, expected);

    auto session = initialized(u"2025-11-25"_s);
    if (!level.isEmpty()) {
        const QJsonObject response =
                request(session, u"lvl"_s, u"logging/setLevel"_s, {{u"level"_s, level}}).response();
        QCOMPARE(response.value(u"result"_s), QJsonValue(QJsonObject()));
    }
    const Sent sent = request(session, 1, u"tools/call"_s,
                              {{u"name"_s, u"chatty"_s}, {u"arguments"_s, QJsonObject{}}});
    QCOMPARE(firstText(resultOf(sent.response())), u"logged"_s);
    QStringList levels;
    for (const QJsonObject &message :
         sent.exchange->relatedWithMethod(u"notifications/message"_s)) {
        const QJsonObject params = message.value(u"params"_s).toObject();
        levels.append(params.value(u"level"_s).toString());
        if (params.value(u"level"_s).toString() == u"warning"_s) {
            QCOMPARE(params.value(u"logger"_s).toString(), u"chatty"_s);
            QCOMPARE(params.value(u"data"_s).toString(), u"w"_s);
        }
    }
    QCOMPARE(levels, expected);
}

void TestMcpServer::listChangedBroadcast()
{
    RecordingChannel readyChannel;
    RecordingChannel freshChannel;
    auto ready = initialized(u"2025-11-25"_s, &readyChannel);
    auto fresh = openSession(&freshChannel); // not initialized: told nothing
    QVERIFY(readyChannel.messages.isEmpty());

    ToolDefinition added;
    added.name = u"added"_s;
    added.inputSchema = objectFrom(u"{'type':'object'}"_s);
    added.handler = [](const std::shared_ptr<ToolCall> &call) {
        call->finish(ToolResult::text(u"hi"_s));
    };
    m_server->tools().add(added);

    QCOMPARE(readyChannel.messages.size(), 1);
    QCOMPARE(readyChannel.messages.first().value(u"method"_s).toString(),
             u"notifications/tools/list_changed"_s);
    QVERIFY(!readyChannel.messages.first().contains(u"id"_s));
    QVERIFY(freshChannel.messages.isEmpty());
    QCOMPARE(toolNames(resultOf(request(ready, 1, u"tools/list"_s).response())
                               .value(u"tools"_s)
                               .toArray())
                     .last(),
             u"added"_s);

    QVERIFY(m_server->tools().remove(u"added"_s));
    QCOMPARE(readyChannel.messages.size(), 2);

    // A closed session hears nothing more.
    m_server->closeSession(ready->id(), kClose);
    m_server->tools().add(added);
    QCOMPARE(readyChannel.messages.size(), 2);
    QVERIFY(freshChannel.messages.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// server-to-client requests

void TestMcpServer::clientRequestAnswered()
{
    auto session = initialized(u"2025-11-25"_s);
    const Sent sent = request(session, 1, u"tools/call"_s,
                              {{u"name"_s, u"ask"_s}, {u"arguments"_s, QJsonObject{}}});
    QVERIFY(sent.owed);
    QVERIFY(sent.exchange->completions.isEmpty());
    // The question travels with the request it belongs to.
    const QList<QJsonObject> questions =
            sent.exchange->relatedWithMethod(u"sampling/createMessage"_s);
    QCOMPARE(questions.size(), 1);
    QVERIFY(m_channel.messages.isEmpty());
    const QJsonValue questionId = questions.first().value(u"id"_s);
    QVERIFY(questionId.isString() || questionId.isDouble());
    QCOMPARE(questions.first().value(u"params"_s).toObject().value(u"maxTokens"_s).toInt(), 16);

    // A response to an id we never used is ignored.
    const Sent stray = sendMessage(session, jsonrpc::makeResult(u"cmcp-none"_s, QJsonObject{}));
    QVERIFY(!stray.owed);
    QVERIFY(m_clientReplies.isEmpty());

    const QJsonObject answer = objectFrom(
            u"{'role':'assistant','content':{'type':'text','text':'forty-two'},'model':'m'}"_s);
    const Sent reply = sendMessage(session, jsonrpc::makeResult(questionId, answer));
    QVERIFY(!reply.owed);
    QVERIFY(reply.exchange->completions.isEmpty());
    QCOMPARE(m_clientReplies.size(), 1);
    QCOMPARE(m_clientReplies.first().result, answer);
    QVERIFY(m_clientReplies.first().error.isEmpty());
    QCOMPARE(firstText(resultOf(sent.response())), u"forty-two"_s);

    // A second answer to the same question goes nowhere.
    sendMessage(session, jsonrpc::makeResult(questionId, answer));
    QCOMPARE(m_clientReplies.size(), 1);
    QCOMPARE(sent.exchange->completions.size(), 1);
}

void TestMcpServer::clientRequestErrorResponse()
{
    auto session = initialized(u"2025-11-25"_s);
    const Sent sent = request(session, 1, u"tools/call"_s,
                              {{u"name"_s, u"ask"_s}, {u"arguments"_s, QJsonObject{}}});
    const QList<QJsonObject> questions =
            sent.exchange->relatedWithMethod(u"sampling/createMessage"_s);
    QCOMPARE(questions.size(), 1);
    const Sent reply = sendMessage(
            session, jsonrpc::makeError(questions.first().value(u"id"_s), -1, u"user rejected"_s));
    QVERIFY(!reply.owed);
    QCOMPARE(m_clientReplies.size(), 1);
    QVERIFY(m_clientReplies.first().error.contains(u"user rejected"_s));
    QVERIFY(m_clientReplies.first().error.contains(u"-1"_s));
    const QJsonObject result = resultOf(sent.response());
    QCOMPARE(result.value(u"isError"_s), QJsonValue(true));
    QVERIFY(firstText(result).contains(u"user rejected"_s));
}

void TestMcpServer::clientRequestTimeout()
{
    auto session = initialized(u"2025-11-25"_s);
    const Sent sent =
            request(session, 1, u"tools/call"_s,
                    {{u"name"_s, u"ask"_s}, {u"arguments"_s, QJsonObject{{u"timeoutMs"_s, 40}}}});
    const QList<QJsonObject> questions =
            sent.exchange->relatedWithMethod(u"sampling/createMessage"_s);
    QCOMPARE(questions.size(), 1);
    QVERIFY(sent.exchange->completions.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_clientReplies.size(), 1, 5000);
    QVERIFY2(m_clientReplies.first().error.contains(u"40 ms"_s),
             qPrintable(m_clientReplies.first().error));
    const QJsonObject result = resultOf(sent.response());
    QCOMPARE(result.value(u"isError"_s), QJsonValue(true));

    // The answer that comes too late is not delivered.
    const Sent late = sendMessage(
            session, jsonrpc::makeResult(questions.first().value(u"id"_s), QJsonObject{}));
    QVERIFY(!late.owed);
    QCOMPARE(m_clientReplies.size(), 1);
    QCOMPARE(sent.exchange->completions.size(), 1);
}

void TestMcpServer::sessionCloseFailsOutstandingWork()
{
    RecordingChannel channel;
    auto session = initialized(u"2025-11-25"_s, &channel);
    QSignalSpy closed(m_server.get(), &McpServer::sessionClosed);

    const Sent asking = request(session, 1, u"tools/call"_s,
                                {{u"name"_s, u"ask"_s}, {u"arguments"_s, QJsonObject{}}});
    const std::shared_ptr<ToolCall> askCall = m_lastCall;
    const Sent sleeping =
            request(session, 2, u"tools/call"_s,
                    {{u"name"_s, u"slow"_s}, {u"arguments"_s, QJsonObject{{u"ms"_s, 600000}}}});
    const std::shared_ptr<ToolCall> slowCall = m_lastCall;
    QVERIFY(askCall && slowCall && askCall != slowCall);
    QCOMPARE(session->requestsInFlight(), 2);
    QVERIFY(asking.exchange->completions.isEmpty());
    QVERIFY(sleeping.exchange->completions.isEmpty());

    m_server->closeSession(session->id(), kClose);

    QVERIFY(session->isClosed());
    QVERIFY(!m_server->findSession(session->id()));
    QCOMPARE(closed.count(), 1);
    QCOMPARE(closed.first().at(0).toString(), session->id());
    // The outstanding question to the client failed ...
    QCOMPARE(m_clientReplies.size(), 1);
    QVERIFY2(m_clientReplies.first().error.contains(u"session has ended"_s),
             qPrintable(m_clientReplies.first().error));
    // ... both calls were cancelled, with the reason ...
    QVERIFY(askCall->isCancelled());
    QVERIFY(slowCall->isCancelled());
    QCOMPARE(m_cancelReasons, (QStringList{kClose, kClose}));
    // ... and both exchanges are released without a response.
    QCOMPARE(asking.exchange->completions.size(), 1);
    QVERIFY(asking.exchange->completions.first().isUndefined());
    QCOMPARE(sleeping.exchange->completions.size(), 1);
    QVERIFY(sleeping.exchange->completions.first().isUndefined());
    QCOMPARE(session->requestsInFlight(), 0);

    // Asking the client after the end fails at once; nothing reaches the channel.
    QString error;
    session->requestFromClient(
            {}, u"roots/list"_s, {}, [&](const QJsonObject &, const QString &e) { error = e; },
            1000);
    QVERIFY(error.contains(u"session has ended"_s));
    QVERIFY(channel.messages.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// resources, prompts, completion

void TestMcpServer::resourcesReadAndUnknownUri()
{
    auto session = initialized(u"2025-11-25"_s);
    const QJsonObject ok =
            request(session, 1, u"resources/read"_s, {{u"uri"_s, u"mem://status"_s}}).response();
    const QJsonArray contents = resultOf(ok).value(u"contents"_s).toArray();
    QCOMPARE(contents.size(), 1);
    QCOMPARE(contents.first().toObject().value(u"text"_s).toString(), u"ok"_s);

    const QJsonObject missing =
            request(session, 2, u"resources/read"_s, {{u"uri"_s, u"mem://nothing"_s}}).response();
    QCOMPARE(errorCode(missing), -32002);
    QCOMPARE(missing.value(u"id"_s), QJsonValue(2));
    QCOMPARE(missing.value(u"error"_s)
                     .toObject()
                     .value(u"data"_s)
                     .toObject()
                     .value(u"uri"_s)
                     .toString(),
             u"mem://nothing"_s);

    const QJsonArray listed = resultOf(request(session, 3, u"resources/list"_s).response())
                                      .value(u"resources"_s)
                                      .toArray();
    QCOMPARE(listed.size(), 1);
    QCOMPARE(listed.first().toObject().value(u"uri"_s).toString(), u"mem://status"_s);
    const QJsonArray templates =
            resultOf(request(session, 4, u"resources/templates/list"_s).response())
                    .value(u"resourceTemplates"_s)
                    .toArray();
    QCOMPARE(templates.size(), 2);
    QCOMPARE(templates.first().toObject().value(u"uriTemplate"_s).toString(),
             u"repo://{owner}/tree/{+path}"_s);
}

void TestMcpServer::resourceTemplateVariables_data()
{
    QTest::addColumn<QString>("uri");
    QTest::addColumn<QStringList>("variables"); // name=value, sorted; empty for no match

    QTest::newRow("segment and rest") << u"repo://alice/tree/src/main.cpp"_s
                                      << QStringList{u"owner=alice"_s, u"path=src/main.cpp"_s};
    QTest::newRow("rest of one segment")
            << u"repo://bob/tree/README"_s << QStringList{u"owner=bob"_s, u"path=README"_s};
    QTest::newRow("single segment") << u"logs://build"_s << QStringList{u"name=build"_s};
    QTest::newRow("segment cannot hold a slash") << u"logs://build/old"_s << QStringList();
    QTest::newRow("owner cannot hold a slash") << u"repo://a/b/tree/x"_s << QStringList();
    QTest::newRow("empty segment") << u"repo:///tree/x"_s << QStringList();
    QTest::newRow("literal part differs") << u"repo://alice/blob/x"_s << QStringList();
}

void TestMcpServer::resourceTemplateVariables()
{
    QFETCH(QString, uri);
    QFETCH(QStringList, variables);

    auto session = initialized(u"2025-11-25"_s);
    const QJsonObject response =
            request(session, 1, u"resources/read"_s, {{u"uri"_s, uri}}).response();
    if (variables.isEmpty()) {
        QCOMPARE(errorCode(response), -32002);
        return;
    }
    QVERIFY2(!response.contains(u"error"_s), jsonrpc::serialize(response).constData());
    QStringList got;
    for (auto it = m_lastVariables.cbegin(); it != m_lastVariables.cend(); ++it)
        got.append(it.key() + u'=' + it.value());
    got.sort();
    QCOMPARE(got, variables);
    QCOMPARE(resultOf(response)
                     .value(u"contents"_s)
                     .toArray()
                     .first()
                     .toObject()
                     .value(u"uri"_s)
                     .toString(),
             uri);
}

void TestMcpServer::subscribeUnknownResource()
{
    auto session = initialized(u"2025-11-25"_s);
    const QJsonObject response =
            request(session, 1, u"resources/subscribe"_s, {{u"uri"_s, u"mem://nothing"_s}})
                    .response();
    QCOMPARE(errorCode(response), -32002);
    QVERIFY(session->subscriptions().isEmpty());

    const QJsonObject ok =
            request(session, 2, u"resources/subscribe"_s, {{u"uri"_s, u"repo://a/tree/f"_s}})
                    .response();
    QCOMPARE(ok.value(u"result"_s), QJsonValue(QJsonObject()));
    QVERIFY(session->subscriptions().contains(u"repo://a/tree/f"_s));
}

void TestMcpServer::resourcesUpdatedOnlyToSubscribers()
{
    RecordingChannel subscriberChannel;
    RecordingChannel otherChannel;
    auto subscriber = initialized(u"2025-11-25"_s, &subscriberChannel);
    auto other = initialized(u"2025-06-18"_s, &otherChannel);

    const Sent subscribed =
            request(subscriber, 1, u"resources/subscribe"_s, {{u"uri"_s, u"mem://status"_s}});
    QCOMPARE(subscribed.response().value(u"result"_s), QJsonValue(QJsonObject()));

    m_server->resources().notifyUpdated(u"mem://status"_s);
    QCOMPARE(subscriberChannel.messages.size(), 1);
    const QJsonObject notification = subscriberChannel.messages.first();
    QCOMPARE(notification.value(u"method"_s).toString(), u"notifications/resources/updated"_s);
    QCOMPARE(notification.value(u"params"_s).toObject().value(u"uri"_s).toString(),
             u"mem://status"_s);
    QVERIFY(otherChannel.messages.isEmpty());
    // Unrelated messages never ride on the subscribe request's exchange.
    QVERIFY(subscribed.exchange->related.isEmpty());

    // Another URI: nobody subscribed.
    m_server->resources().notifyUpdated(u"repo://x/tree/y"_s);
    QCOMPARE(subscriberChannel.messages.size(), 1);
    QVERIFY(otherChannel.messages.isEmpty());

    const QJsonObject unsubscribed =
            request(subscriber, 2, u"resources/unsubscribe"_s, {{u"uri"_s, u"mem://status"_s}})
                    .response();
    QCOMPARE(unsubscribed.value(u"result"_s), QJsonValue(QJsonObject()));
    m_server->resources().notifyUpdated(u"mem://status"_s);
    QCOMPARE(subscriberChannel.messages.size(), 1);
    QVERIFY(otherChannel.messages.isEmpty());
}

void TestMcpServer::promptsGet()
{
    auto session = initialized(u"2025-11-25"_s);
    const QJsonObject missing =
            request(session, 1, u"prompts/get"_s, {{u"name"_s, u"review"_s}}).response();
    QCOMPARE(errorCode(missing), -32602);
    QVERIFY2(errorMessage(missing).contains(u"'code'"_s), qPrintable(errorMessage(missing)));

    const QJsonObject onlyOptional =
            request(session, 2, u"prompts/get"_s,
                    {{u"name"_s, u"review"_s}, {u"arguments"_s, QJsonObject{{u"style"_s, u"x"_s}}}})
                    .response();
    QCOMPARE(errorCode(onlyOptional), -32602);

    const QJsonObject unknown =
            request(session, 3, u"prompts/get"_s, {{u"name"_s, u"nope"_s}}).response();
    QCOMPARE(errorCode(unknown), -32602);

    const QJsonObject ok = request(session, 4, u"prompts/get"_s,
                                   {{u"name"_s, u"review"_s},
                                    {u"arguments"_s, QJsonObject{{u"code"_s, u"int x;"_s}}}})
                                   .response();
    QVERIFY2(!ok.contains(u"error"_s), jsonrpc::serialize(ok).constData());
    const QJsonObject result = resultOf(ok);
    QCOMPARE(result.value(u"description"_s).toString(), u"Reviews code."_s);
    const QJsonArray messages = result.value(u"messages"_s).toArray();
    QCOMPARE(messages.size(), 1);
    QCOMPARE(messages.first().toObject().value(u"content"_s).toObject().value(u"text"_s).toString(),
             u"Review (plain): int x;"_s);

    const QJsonArray prompts = resultOf(request(session, 5, u"prompts/list"_s).response())
                                       .value(u"prompts"_s)
                                       .toArray();
    QCOMPARE(prompts.size(), 2);
    const QJsonArray arguments = prompts.first().toObject().value(u"arguments"_s).toArray();
    QCOMPARE(arguments.size(), 2);
    QCOMPARE(arguments.at(0).toObject().value(u"required"_s), QJsonValue(true));
    QCOMPARE(arguments.at(1).toObject().value(u"required"_s), QJsonValue(false));
}

void TestMcpServer::completionComplete()
{
    auto session = initialized(u"2025-11-25"_s);
    auto complete = [&](int id, const QJsonObject &ref, const QString &name, const QString &value) {
        return request(session, id, u"completion/complete"_s,
                       {{u"ref"_s, ref},
                        {u"argument"_s, QJsonObject{{u"name"_s, name}, {u"value"_s, value}}}})
                .response();
    };
    const QJsonObject promptRef{{u"type"_s, u"ref/prompt"_s}, {u"name"_s, u"review"_s}};

    QJsonObject completion =
            resultOf(complete(1, promptRef, u"style"_s, u"ca"_s)).value(u"completion"_s).toObject();
    QCOMPARE(completion.value(u"values"_s).toArray(), (QJsonArray{u"careful"_s, u"casual"_s}));
    QCOMPARE(completion.value(u"total"_s).toInt(), 2);
    QCOMPARE(completion.value(u"hasMore"_s), QJsonValue(false));

    completion =
            resultOf(complete(2, promptRef, u"code"_s, u""_s)).value(u"completion"_s).toObject();
    QCOMPARE(completion.value(u"values"_s).toArray(), QJsonArray());

    const QJsonObject templateRef{{u"type"_s, u"ref/resource"_s},
                                  {u"uri"_s, u"repo://{owner}/tree/{+path}"_s}};
    completion = resultOf(complete(3, templateRef, u"owner"_s, u"al"_s))
                         .value(u"completion"_s)
                         .toObject();
    QCOMPARE(completion.value(u"values"_s).toArray(), (QJsonArray{u"alice"_s, u"albert"_s}));

    // At most 100 values, with the true total.
    completion = resultOf(complete(4, {{u"type"_s, u"ref/prompt"_s}, {u"name"_s, u"many"_s}},
                                   u"n"_s, u"v"_s))
                         .value(u"completion"_s)
                         .toObject();
    QCOMPARE(completion.value(u"values"_s).toArray().size(), 100);
    QCOMPARE(completion.value(u"values"_s).toArray().first().toString(), u"v0"_s);
    QCOMPARE(completion.value(u"total"_s).toInt(), 150);
    QCOMPARE(completion.value(u"hasMore"_s), QJsonValue(true));

    QCOMPARE(errorCode(complete(5, {{u"type"_s, u"ref/prompt"_s}, {u"name"_s, u"nope"_s}}, u"x"_s,
                                u""_s)),
             -32602);
    QCOMPARE(errorCode(complete(6, {{u"type"_s, u"ref/resource"_s}, {u"uri"_s, u"mem://{nope}"_s}},
                                u"x"_s, u""_s)),
             -32602);
}

QTEST_GUILESS_MAIN(TestMcpServer)
#include "tst_mcpserver.moc"
