#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QSet>
#include <QString>

#include <map>
#include <memory>

namespace cmcp {

class Session;

// The open subscriptions/listen streams of the modern era (2026-07-28 on): each a request that
// stays in flight, on whose stream the notifications its filter asked for go, each carrying
// the request's id as _meta["io.modelcontextprotocol/subscriptionId"]. A stream ends when its
// client closes it (the request is cancelled) or, gracefully with a response, when the server
// ends it.
class Subscriptions
{
public:
    enum class ListKind { Tools, Prompts, Resources };

    // What a listen request asked for, as the acknowledgement echoes it: only what is asked
    // is sent.
    struct Filter
    {
        bool tools = false;
        bool prompts = false;
        bool resources = false;
        QSet<QString> resourceUris;
        // Tasks (the Tasks extension) whose every status change is sent as notifications/tasks.
        QSet<QString> taskIds;
        static Filter fromParams(const QJsonObject &notifications);
        QJsonObject toJson() const;
    };

    // Acknowledges the listen request `idKey` of `session` (answered with `serial` and `id`
    // when the server ends it) and keeps it until the session cancels it.
    void open(const std::shared_ptr<Session> &session, const QString &idKey, quint64 serial,
              const QJsonValue &id, Filter filter);
    void listChanged(ListKind kind);
    // Only to the streams of `owner` (a stateless session's id names its principal) when given.
    void resourceUpdated(const QString &uri, const QString &owner);
    // A task of `owner` changed: `detailedTask` (what tasks/get would answer now) to the streams of
    // that owner that asked for the task.
    void taskChanged(const QString &taskId, const QString &owner, const QJsonObject &detailedTask);
    // Ends every stream with its graceful response (the server is shutting down).
    void closeAll();
    int size() const { return int(m_streams.size()); }

private:
    struct Stream
    {
        std::weak_ptr<Session> session;
        QString ownerId; // the session's id
        QString idKey;
        quint64 serial = 0;
        QJsonValue id;
        Filter filter;
    };
    // `notification` to every stream for which `wanted(stream)` holds.
    template<typename Wanted>
    void deliver(const QString &method, const QJsonObject &params, Wanted wanted);

    std::map<quint64, Stream> m_streams;
    quint64 m_lastStream = 0;
};

} // namespace cmcp
