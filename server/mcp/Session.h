#pragma once

#include "mcp/Exchange.h"
#include "mcp/LogLevel.h"
#include "mcp/Principal.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QSet>
#include <QString>
#include <QTimer>

#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace cmcp {

class PayloadTracker;

// Called with the client's result, or with an error text when the client answered with an
// error, did not answer in time, or the session ended.
using ClientReply = std::function<void(const QJsonObject &result, const QString &error)>;

// The state of one MCP session: negotiated version, client information, requests in flight
// in both directions. It knows its transport only through Exchange and SessionChannel.
class Session : public QObject
{
    Q_OBJECT
public:
    Session(const QString &id, const QString &transportName, SessionChannel *channel,
            Principal principal = Principal::local());
    ~Session() override;

    const QString &id() const { return m_id; }
    const QString &transportName() const { return m_transportName; }
    // Who opened the session; only the same principal may speak in it.
    const Principal &principal() const { return m_principal; }

    // Empty until initialize has been answered.
    const QString &protocolVersion() const { return m_protocolVersion; }
    bool isInitialized() const { return !m_protocolVersion.isEmpty(); }
    void setNegotiated(const QString &version, const QJsonObject &clientInfo);
    const QJsonObject &clientInfo() const { return m_clientInfo; }

    // The least severe level the client wants; unset means every message is sent (in the legacy
    // era) or none is (a stateless request that named no level).
    void setLogLevel(LogLevel level) { m_logLevel = level; }
    bool wantsLog(LogLevel level) const { return m_logLevel ? level >= *m_logLevel : !m_stateless; }

    // A stateless session serves one request of the modern era (2026-07-28 on): it is never
    // registered, lives while its request is answered, and its client may not be sent requests
    // (that era has none from server to client: it asks through input_required results). Its id
    // names the principal that owns what the request leaves behind (ownerKey()), shared by all that
    // principal's stateless requests.
    bool isStateless() const { return m_stateless; }
    void makeStateless(const QJsonObject &clientCapabilities)
    {
        m_stateless = true;
        m_clientCapabilities = clientCapabilities;
    }
    const QJsonObject &clientCapabilities() const { return m_clientCapabilities; }
    // The task (Tasks extension) whose call this stateless session runs, if any.
    void setTaskId(const QString &taskId) { m_taskId = taskId; }
    const QString &taskId() const { return m_taskId; }
    // The id under which a principal's stateless requests keep their jobs and output handles.
    static QString ownerKey(const Principal &principal)
    {
        return QStringLiteral("principal:") + principal.name();
    }

    // Stateless requests answered on this connection (stdio), by request id, so that
    // notifications/cancelled reaches them.
    void addStatelessRequest(const QString &idKey, const std::shared_ptr<Session> &request);
    std::shared_ptr<Session> statelessRequest(const QString &idKey) const;

    QSet<QString> &subscriptions() { return m_subscriptions; }

    void touch() { m_idle.restart(); }
    qint64 idleMilliseconds() const { return m_idle.elapsed(); }

    // --- client requests in flight ---
    bool isRequestInFlight(const QString &idKey) const { return m_inFlight.contains(idKey); }
    int requestsInFlight() const { return int(m_inFlight.size()); }
    // Returns the request's serial: a client may reuse an id once its request is settled, so a
    // late answer names the serial it belongs to and is dropped when that request is gone.
    quint64 beginRequest(const QString &idKey, std::shared_ptr<PayloadTracker> tracker);
    // Runs when the client cancels the request or the session ends before it is settled.
    void setCancelHandler(const QString &idKey, std::function<void(const QString &reason)> handler);
    // The client gets `response` when given (an administrator's cancel), nothing otherwise.
    void cancelRequest(const QString &idKey, const QString &reason,
                       const std::optional<QJsonObject> &response = std::nullopt);
    // Records the response (or none, when cancelled) of a request in flight.
    void settleRequest(const QString &idKey, quint64 serial,
                       const std::optional<QJsonObject> &response);
    // The same with the response already serialized (compact JSON), for large results.
    void settleRequest(const QString &idKey, quint64 serial, const QByteArray &serializedResponse);
    void sendRelated(const QString &idKey, const QJsonObject &message);
    void suspendRelated(const QString &idKey);

    // --- server requests to the client ---
    // In the 2025 revisions a request to the client. A stateless session asks through its
    // client input instead, under `inputKey` (or one it makes up): only for a capability the
    // request's _meta declares; answered from the answers the client gave, else left pending
    // for the request's input_required result, or parked (a task's call) to wait for tasks/update.
    void requestFromClient(const QString &relatedIdKey, const QString &method,
                           const QJsonObject &params, ClientReply reply, int timeoutMs,
                           const QString &inputKey = {});
    // The client's answers for this attempt of a stateless request, by input key (its
    // inputResponses, and those its requestState carries).
    void setInputAnswers(const QJsonObject &answers) { m_inputAnswers = answers; }
    // The answers used so far: what the next attempt's requestState must carry.
    const QJsonObject &usedInputAnswers() const { return m_usedInputAnswers; }
    // Input asked for that no answer met, by key: {method, params} each.
    const QJsonObject &pendingInput() const { return m_pendingInput; }
    // A task's call: its input requests wait in the task for tasks/update.
    using InputParking =
            std::function<void(const QString &key, const QJsonObject &request, ClientReply reply)>;
    void setInputParking(InputParking park) { m_inputParking = std::move(park); }
    // Returns false when the response answers no request of ours.
    bool deliverClientResponse(const QJsonObject &response);

    void sendUnrelated(const QJsonObject &message);

    // Cancels everything in flight; the session is unusable afterwards.
    void close(const QString &reason);
    bool isClosed() const { return m_closed; }

Q_SIGNALS:
    // The last request in flight was settled (answered or cancelled).
    void allSettled();

public:
private:
    struct InFlight
    {
        std::shared_ptr<PayloadTracker> tracker;
        quint64 serial = 0;
        std::function<void(const QString &)> cancel;
    };
    struct Outgoing
    {
        ClientReply reply;
        std::unique_ptr<QTimer> timer;
    };
    void failOutgoing(const QString &key, const QString &error);
    void askStatelessClient(const QString &method, const QJsonObject &params, ClientReply reply,
                            const QString &inputKey);

    const QString m_id;
    const QString m_transportName;
    SessionChannel *m_channel;
    const Principal m_principal;
    QString m_protocolVersion;
    QJsonObject m_clientInfo;
    std::optional<LogLevel> m_logLevel;
    bool m_stateless = false;
    QJsonObject m_clientCapabilities;
    QString m_taskId;
    QJsonObject m_inputAnswers;
    QJsonObject m_usedInputAnswers;
    QJsonObject m_pendingInput;
    InputParking m_inputParking;
    int m_inputRequestsMade = 0;
    QHash<QString, std::weak_ptr<Session>> m_statelessRequests;
    QSet<QString> m_subscriptions;
    QElapsedTimer m_idle;
    // A map, not a QHash: a QHash keeps the table its first entry allocated (about 4 KB here)
    // after the last is removed, and an idle session has none in flight.
    std::map<QString, InFlight> m_inFlight;
    std::map<QString, Outgoing> m_outgoing;
    qint64 m_nextOutgoingId = 1;
    quint64 m_nextRequestSerial = 1;
    bool m_closed = false;
};

// Collects the responses of one inbound payload and completes its Exchange once every
// request in it is settled (as one object, or an array for a batch).
class PayloadTracker
{
public:
    PayloadTracker(std::shared_ptr<Exchange> exchange, bool batch);
    void expect(const QString &idKey);
    void addResponse(const QJsonObject &response);
    void settle(const QString &idKey, const std::optional<QJsonObject> &response);
    void settle(const QString &idKey, const QByteArray &serializedResponse);
    void sendRelated(const QJsonObject &message) { m_exchange->sendRelated(message); }
    void suspend() { m_exchange->suspend(); }
    // Every message of the payload has been dispatched: from now on the exchange completes as
    // soon as nothing is pending. A payload of notifications alone never completes.
    void seal();
    bool expectsReply() const { return m_expectsReply; }

private:
    void finishIfDone();

    std::shared_ptr<Exchange> m_exchange;
    bool m_batch;
    bool m_sealed = false;
    bool m_expectsReply = false;
    bool m_completed = false;
    QSet<QString> m_pending;
    // A response is an object, or already serialized when `json` is set.
    struct Response
    {
        QJsonObject object;
        QByteArray json;
    };
    QList<Response> m_responses;
    bool m_anySerialized = false;
};

} // namespace cmcp
