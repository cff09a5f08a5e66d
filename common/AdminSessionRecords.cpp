#include "common/AdminSessionRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

QJsonObject SessionRecord::toJson() const
{
    return {{QLatin1String("sessionId"), sessionId},
            {QLatin1String("transport"), transport},
            {QLatin1String("clientName"), clientName},
            {QLatin1String("openedAt"), json::timeText(openedAt)},
            {QLatin1String("calls"), calls}};
}

SessionRecord SessionRecord::fromJson(const QJsonObject &object)
{
    return {json::text(object, "sessionId"), json::text(object, "transport"),
            json::text(object, "clientName"), json::time(object, "openedAt"),
            json::field(object, "calls").toInt()};
}

QJsonObject SessionOpenedEvent::toJson() const
{
    return {{QLatin1String("sessionId"), sessionId},
            {QLatin1String("transport"), transport},
            {QLatin1String("openedAt"), json::timeText(openedAt)}};
}

SessionOpenedEvent SessionOpenedEvent::fromJson(const QJsonObject &object)
{
    return {json::text(object, "sessionId"), json::text(object, "transport"),
            json::time(object, "openedAt")};
}

QJsonObject SessionClosedEvent::toJson() const
{
    return {{QLatin1String("sessionId"), sessionId}, {QLatin1String("reason"), reason}};
}

SessionClosedEvent SessionClosedEvent::fromJson(const QJsonObject &object)
{
    return {json::text(object, "sessionId"), json::text(object, "reason")};
}

QJsonObject CloseSessionParams::toJson() const
{
    return {{QLatin1String("sessionId"), sessionId}};
}

std::optional<CloseSessionParams> CloseSessionParams::fromJson(const QJsonObject &object)
{
    const QString sessionId = json::text(object, "sessionId");
    if (sessionId.isEmpty())
        return std::nullopt;
    return CloseSessionParams{sessionId};
}

} // namespace cmcp::admin
