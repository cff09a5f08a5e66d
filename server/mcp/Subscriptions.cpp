#include "mcp/Subscriptions.h"

#include "mcp/JsonRpc.h"
#include "mcp/Session.h"

#include <QJsonArray>

namespace cmcp {

namespace {

const QLatin1String SubscriptionIdKey("io.modelcontextprotocol/subscriptionId");

QJsonObject withSubscriptionId(QJsonObject params, const QJsonValue &id)
{
    QJsonObject meta = params.value(QLatin1String("_meta")).toObject();
    meta.insert(SubscriptionIdKey, id);
    params.insert(QLatin1String("_meta"), meta);
    return params;
}

} // namespace

Subscriptions::Filter Subscriptions::Filter::fromParams(const QJsonObject &notifications)
{
    Filter filter;
    filter.tools = notifications.value(QLatin1String("toolsListChanged")).toBool();
    filter.prompts = notifications.value(QLatin1String("promptsListChanged")).toBool();
    filter.resources = notifications.value(QLatin1String("resourcesListChanged")).toBool();
    for (const QJsonValue &uri :
         notifications.value(QLatin1String("resourceSubscriptions")).toArray())
        filter.resourceUris.insert(uri.toString());
    for (const QJsonValue &task : notifications.value(QLatin1String("taskIds")).toArray())
        filter.taskIds.insert(task.toString());
    return filter;
}

QJsonObject Subscriptions::Filter::toJson() const
{
    QJsonObject object;
    if (tools)
        object.insert(QLatin1String("toolsListChanged"), true);
    if (prompts)
        object.insert(QLatin1String("promptsListChanged"), true);
    if (resources)
        object.insert(QLatin1String("resourcesListChanged"), true);
    if (!resourceUris.isEmpty()) {
        QStringList uris(resourceUris.begin(), resourceUris.end());
        uris.sort();
        object.insert(QLatin1String("resourceSubscriptions"), QJsonArray::fromStringList(uris));
    }
    if (!taskIds.isEmpty()) {
        QStringList ids(taskIds.begin(), taskIds.end());
        ids.sort();
        object.insert(QLatin1String("taskIds"), QJsonArray::fromStringList(ids));
    }
    return object;
}

void Subscriptions::open(const std::shared_ptr<Session> &session, const QString &idKey,
                         quint64 serial, const QJsonValue &id, Filter filter)
{
    const quint64 stream = ++m_lastStream;
    session->sendRelated(
            idKey,
            jsonrpc::makeNotification(
                    QStringLiteral("notifications/subscriptions/acknowledged"),
                    withSubscriptionId({{QLatin1String("notifications"), filter.toJson()}}, id)));
    m_streams.emplace(stream, Stream{session, session->id(), idKey, serial, id, std::move(filter)});
    session->setCancelHandler(idKey, [this, stream](const QString &) { m_streams.erase(stream); });
}

template<typename Wanted>
void Subscriptions::deliver(const QString &method, const QJsonObject &params, Wanted wanted)
{
    for (auto it = m_streams.begin(); it != m_streams.end();) {
        const std::shared_ptr<Session> session = it->second.session.lock();
        if (!session || session->isClosed()) {
            it = m_streams.erase(it);
            continue;
        }
        if (wanted(it->second))
            session->sendRelated(
                    it->second.idKey,
                    jsonrpc::makeNotification(method, withSubscriptionId(params, it->second.id)));
        ++it;
    }
}

void Subscriptions::listChanged(ListKind kind)
{
    switch (kind) {
    case ListKind::Tools:
        return deliver(QStringLiteral("notifications/tools/list_changed"), {},
                       [](const Stream &stream) { return stream.filter.tools; });
    case ListKind::Prompts:
        return deliver(QStringLiteral("notifications/prompts/list_changed"), {},
                       [](const Stream &stream) { return stream.filter.prompts; });
    case ListKind::Resources:
        return deliver(QStringLiteral("notifications/resources/list_changed"), {},
                       [](const Stream &stream) { return stream.filter.resources; });
    }
}

void Subscriptions::resourceUpdated(const QString &uri, const QString &owner)
{
    deliver(QStringLiteral("notifications/resources/updated"), {{QLatin1String("uri"), uri}},
            [&uri, &owner](const Stream &stream) {
                return stream.filter.resourceUris.contains(uri)
                        && (owner.isEmpty() || stream.ownerId == owner);
            });
}

void Subscriptions::taskChanged(const QString &taskId, const QString &owner,
                                const QJsonObject &detailedTask)
{
    deliver(QStringLiteral("notifications/tasks"), detailedTask,
            [&taskId, &owner](const Stream &stream) {
                return stream.ownerId == owner && stream.filter.taskIds.contains(taskId);
            });
}

void Subscriptions::closeAll()
{
    // Taken first: settling a stream's request may end its session.
    const std::map<quint64, Stream> streams = std::move(m_streams);
    m_streams.clear();
    for (const auto &[key, stream] : streams) {
        if (const std::shared_ptr<Session> session = stream.session.lock())
            session->settleRequest(stream.idKey, stream.serial,
                                   jsonrpc::makeResult(stream.id,
                                                       QJsonObject{{QLatin1String("_meta"),
                                                                    QJsonObject{{SubscriptionIdKey,
                                                                                 stream.id}}}}));
    }
}

} // namespace cmcp
