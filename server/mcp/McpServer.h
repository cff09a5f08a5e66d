#pragma once

#include "mcp/JsonRpc.h"
#include "mcp/PrincipalProfiles.h"
#include "mcp/PromptRegistry.h"
#include "mcp/RequestMeta.h"
#include "mcp/RequestState.h"
#include "mcp/ResourceRegistry.h"
#include "mcp/ServiceHealth.h"
#include "mcp/Session.h"
#include "mcp/Subscriptions.h"
#include "mcp/TaskStore.h"
#include "mcp/ToolCallRecord.h"
#include "mcp/ToolRegistry.h"

#include <QHash>
#include <QObject>

#include <map>

#include <functional>
#include <memory>

namespace cmcp {

class RecordedCall;
class RunningCall;

struct ServerIdentity
{
    QString name = QStringLiteral("container-mcp");
    QString title = QStringLiteral("Container-MCP");
    QString version = QStringLiteral(CMCP_VERSION);
    QString instructions;
};

// The MCP core: lifecycle and version negotiation, sessions, and the dispatch of every MCP
// method to the registries. It knows no transport (only Exchange and SessionChannel) and no
// tool (only the ToolRegistry).
class McpServer : public QObject
{
    Q_OBJECT
public:
    explicit McpServer(ServerIdentity identity, QObject *parent = nullptr);
    ~McpServer() override;

    ToolRegistry &tools() { return m_tools; }
    ResourceRegistry &resources() { return m_resources; }
    PromptRegistry &prompts() { return m_prompts; }
    // The profile of each principal (MCP_POLICY_FILE): the tools it is offered and its rate of
    // calls are enforced here, the other rules by the layers that enforce their global settings.
    PrincipalProfiles &profiles() { return m_profiles; }
    const PrincipalProfiles &profiles() const { return m_profiles; }
    // What start-up found unusable; /health reports it.
    ServiceHealth &health() { return m_health; }
    const ServiceHealth &health() const { return m_health; }

    void setPageSize(int size) { m_pageSize = qMax(1, size); }
    // The key requestStates are signed under; without one, a random key of this process's
    // (so a replica, or this daemon after a restart, refuses the states it did not issue).
    void setRequestStateKey(QByteArray key)
    {
        m_requestStates = RequestStateSigner(std::move(key));
    }
    // Tasks are kept in `directory` as well as in memory, and a restart finds them there
    // (TaskStore::useDirectory).
    bool keepTasksIn(const QString &directory, QString *error)
    {
        return m_tasks->useDirectory(directory, error);
    }
    void setMaxSessions(int count) { m_maxSessions = count; }
    // TASKS_MAX_PER_PRINCIPAL (TaskStore::setMaxPerOwner).
    void setMaxTasksPerPrincipal(int count) { m_tasks->setMaxPerOwner(count); }

    // Returns null when the session limit is reached.
    std::shared_ptr<Session> openSession(const QString &transportName, SessionChannel *channel,
                                         const Principal &principal = Principal::local());
    std::shared_ptr<Session> findSession(const QString &id) const { return m_sessions.value(id); }
    void closeSession(const QString &id, const QString &reason);
    int sessionCount() const { return int(m_sessions.size()); }

    // Handles one inbound payload. Returns true when the client is owed a reply, which then
    // arrives through exchange->complete() (at once or later); false for notifications and
    // responses alone.
    // A request of the modern era on a connection (stdio) is served statelessly as by
    // serveStateless, whatever the connection's session negotiated.
    bool handlePayload(const std::shared_ptr<Session> &session, const jsonrpc::Payload &payload,
                       std::shared_ptr<Exchange> exchange);

    // Serves one request of the modern era (2026-07-28 on), whose _meta `meta` has been read and
    // whose version is served here, without a session: it gets a stateless one of its own,
    // owned by `principal`, returned so that the transport can close it when the client gives
    // up on the answer (which cancels the request). Its answer arrives through exchange.
    std::shared_ptr<Session> serveStateless(const jsonrpc::Message &message,
                                            const RequestMeta &meta,
                                            std::shared_ptr<Exchange> exchange,
                                            const QString &transportName,
                                            const Principal &principal);

    // Tool calls whose tool has not answered yet, by call id.
    QList<ToolCallRecord> callsInFlight() const;
    // Calls running, or done and waiting for their record to be durable before the answer.
    int callsInFlightCount() const { return int(m_running.size()) + m_answersAwaitingRecords; }
    // The daemon is shutting down: every request but ping is refused with an error saying so,
    // while the calls in flight finish. It cannot be undone.
    // Open subscriptions/listen streams end with their graceful response.
    void beginDraining();
    bool isDraining() const { return m_draining; }
    // Cancels a call in flight as its client could (the tool is told to stop, the record ends
    // as cancelled), but the client gets an error response naming `reason`. False when no
    // such call is running.
    bool cancelCall(quint64 callId, const QString &reason);

    // For an observer that must record every call (the audit log with AUDIT_REQUIRED): asked
    // right after toolCallStarted and toolCallFinished are emitted, a non-empty answer is why
    // the call fails closed, with that reason as a tool error, before the tool runs or instead
    // of its result.
    void setFailClosedCheck(std::function<QString()> check)
    {
        m_failClosedCheck = std::move(check);
    }
    // For an observer that makes the records durable later and in groups (the audit log's
    // group commit): `wait` runs its argument once the records of every call ended so far are
    // on disk. A tools/call's answer is sent only then, and the fail-closed check is asked
    // again. Without an observer the answer goes at once.
    void setRecordDurabilityWait(std::function<void(std::function<void()> then)> wait)
    {
        m_durabilityWait = std::move(wait);
    }

Q_SIGNALS:
    void sessionOpened(const QString &sessionId, const QString &transport);
    void sessionClosed(const QString &sessionId, const QString &reason);
    // Every tools/call, emitted synchronously: toolCallFinished comes before the response is
    // handed to the transport (and that waits for setRecordDurabilityWait's observer), so an
    // observer that must record a call durably (the audit log) does so before the client
    // learns the result. `result` is null for the outcomes where no
    // tool result exists (invalid arguments, unknown tool, cancelled).
    void toolCallStarted(const cmcp::ToolCallRecord &call);
    void toolCallFinished(const cmcp::ToolCallRecord &call, const cmcp::ToolResult *result);
    // A running call's work wrote output (ToolCall::reportOutput); `outputBytes` in all so far.
    // As often as output arrives: observers throttle.
    void toolCallOutput(quint64 callId, qint64 outputBytes);

private:
    // A tools/call ends its record, waits for it to be durable and asks the fail-closed check
    // through RecordedCall alone.
    friend class RecordedCall;

    struct Request
    {
        std::shared_ptr<Session> session;
        QString key;
        quint64 serial;
        QString method;
        QJsonValue id;
        QJsonObject params;
        void reply(const QJsonValue &result) const;
        void fail(int code, const QString &message,
                  const QJsonValue &data = QJsonValue::Undefined) const;
    };
    using Handler = void (McpServer::*)(const Request &);
    struct Method
    {
        Handler handler;
        QJsonObject paramsSchema;
    };

    // The method table. Each family of methods adds its rows at construction, from a file of
    // its own under server/mcp/methods (this one's lifecycle methods from McpServer.cpp): a new
    // protocol feature is a new family, not new lines here.
    // Which sessions have a method: the 2025 era's sessions, the modern era's stateless
    // requests, or both.
    enum class Era { Sessions, Modern, Both };
    void addMethod(const QString &name, Handler handler, QJsonObject paramsSchema,
                   Era era = Era::Both);
    void addLifecycleMethods();
    void addToolMethods();
    void addResourceMethods();
    void addPromptMethods();
    void addCompletionMethods();
    void addTaskMethods();
    void addListenMethods();

    void dispatchRequest(const std::shared_ptr<Session> &session, const jsonrpc::Message &message,
                         const std::shared_ptr<PayloadTracker> &tracker);
    void handleNotification(const std::shared_ptr<Session> &session,
                            const jsonrpc::Message &message);
    // Dispatches `message` in the stateless `session`, which is kept until it is answered.
    void dispatchDetached(const std::shared_ptr<Session> &session, const jsonrpc::Message &message,
                          std::shared_ptr<Exchange> exchange);

    // Lifecycle (McpServer.cpp).
    void initialize(const Request &request);
    void discover(const Request &request);
    void ping(const Request &request);
    void setLogLevel(const Request &request);

    // Tools (methods/ToolMethods.cpp).
    void listTools(const Request &request);
    void callTool(const Request &request);
    // Refuses a tools/call over its principal's call_rate (-32029, with the wait in data).
    void refuseOverRate(const Request &request, const QString &name, const QJsonObject &arguments,
                        qint64 waitMs);

    // The record of every tools/call (methods/CallRecording.cpp), ended only through a
    // RecordedCall, which also holds the answer until the record is durable.
    ToolCallRecord startCallRecord(const Request &request, const QString &tool,
                                   const QJsonObject &arguments);
    void endCallRecord(ToolCallRecord &call, ToolCallOutcome outcome, const ToolResult *result,
                       const QString &detail = {});

    // Tasks (methods/TaskMethods.cpp).
    // Answers a tools/call with a new task and runs the call on in a detached stateless
    // session of the same principal, whose response the task keeps.
    void startTask(const Request &request, const ToolDefinition &tool, const QJsonObject &answers);
    // The request's task, or null with the request failed: -32021 when the request did not
    // declare the extension, -32602 for a task that is unknown or another principal's.
    Task *requestedTask(const Request &request);
    void getTask(const Request &request);
    void cancelTask(const Request &request);
    void updateTask(const Request &request);

    // The questions a request asks its client (methods/InputRequiredState.cpp).
    // The modern era's `method` may be retried with the client's answers and the requestState
    // it was handed: its params schema takes them.
    void acceptClientAnswers(const QString &method);
    // What a requestState is bound to: the method, the tool or prompt, a digest of the
    // arguments and the principal, so that it answers nothing else.
    static QJsonObject stateBinding(const Request &request, const QString &name,
                                    const QJsonObject &arguments);
    // The client's answers a stateless request brings (its requestState's, then its
    // inputResponses), or nullopt with the request failed when the requestState is refused.
    std::optional<QJsonObject> clientAnswers(const Request &request, const QJsonObject &binding);
    QString sealAnswers(const QJsonObject &binding, const QJsonObject &answers) const;
    // Replies to a stateless request with the questions among `questions` that `answers` do
    // not answer, as an input_required result; false when all are answered. A question of a
    // capability the request does not declare fails it (-32021), and counts as replied.
    bool replyInputRequired(const Request &request, const QList<InputRequest> &questions,
                            const QJsonObject &answers, const QJsonObject &binding);
    // Asks the client of a 2025-era session `questions` one after another, then runs `then`
    // with the answers by key; the request fails when one gets no answer.
    void askInTurn(const Request &request, QList<InputRequest> questions, QJsonObject answers,
                   std::function<void(const QJsonObject &answers)> then);

    // Resources (methods/ResourceMethods.cpp).
    void listResources(const Request &request);
    void listResourceTemplates(const Request &request);
    void readResource(const Request &request);
    void failResourceNotFound(const Request &request, const QString &uri);
    void subscribe(const Request &request);
    void unsubscribe(const Request &request);

    // Prompts (methods/PromptMethods.cpp).
    void listPrompts(const Request &request);
    void getPrompt(const Request &request);

    // Completion (methods/CompletionMethods.cpp).
    void complete(const Request &request);

    // subscriptions/listen (methods/ListenMethods.cpp).
    void listen(const Request &request);

    QJsonObject capabilities() const;
    // What a stateless request can use: list changes and resource updates come on
    // subscriptions/listen.
    QJsonObject statelessCapabilities() const;
    // The modern era's caching hints (ttlMs, cacheScope) for a result of `method`.
    static void insertCacheHints(QJsonObject &result, const QString &method);
    // Slices `items` for the request's cursor; false (and the request failed) on a bad cursor
    // (methods/Pagination.cpp).
    bool paginate(const Request &request, const QJsonArray &items, const QString &key);
    void broadcast(const QString &method, const QJsonObject &params = {});

    ServerIdentity m_identity;
    ToolRegistry m_tools;
    ResourceRegistry m_resources;
    PromptRegistry m_prompts;
    PrincipalProfiles m_profiles;
    ServiceHealth m_health;
    QHash<QString, Method> m_methods;
    // The methods of the modern era: m_methods without the ones it removed, with discovery.
    QHash<QString, Method> m_statelessMethods;
    QHash<QString, std::shared_ptr<Session>> m_sessions;
    // Stateless sessions whose request is not answered yet: nothing else keeps them.
    QHash<const Session *, std::shared_ptr<Session>> m_statelessInFlight;
    int m_pageSize = 100;
    int m_maxSessions = 10000;
    quint64 m_lastCallId = 0;
    // Tool calls whose tool has not answered yet, by call id.
    std::map<quint64, std::shared_ptr<RunningCall>> m_running;
    // Shared with the tasks' exchanges, which may outlive the server.
    std::shared_ptr<TaskStore> m_tasks = std::make_shared<TaskStore>();
    RequestStateSigner m_requestStates;
    Subscriptions m_subscriptions;
    bool m_draining = false;

    std::function<QString()> m_failClosedCheck;
    QString failClosedReason() const { return m_failClosedCheck ? m_failClosedCheck() : QString(); }
    std::function<void(std::function<void()>)> m_durabilityWait;
    int m_answersAwaitingRecords = 0;
    // Runs `then` once the records of the calls ended so far are durable.
    void afterRecordsDurable(std::function<void()> then);
};

} // namespace cmcp
