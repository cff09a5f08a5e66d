#include "common/AdminLogRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

QJsonObject LogLineEvent::toJson() const
{
    return {{QLatin1String("level"), level},
            {QLatin1String("logger"), logger},
            {QLatin1String("text"), text},
            {QLatin1String("time"), json::timeText(time)}};
}

LogLineEvent LogLineEvent::fromJson(const QJsonObject &object)
{
    return {json::text(object, "level"), json::text(object, "logger"), json::text(object, "text"),
            json::time(object, "time")};
}

QJsonObject SubscribeLogParams::toJson() const
{
    return {{QLatin1String("level"), level}};
}

SubscribeLogParams SubscribeLogParams::fromJson(const QJsonObject &object)
{
    return {json::text(object, "level")};
}

QJsonObject SubscribeLogResult::toJson() const
{
    return {{QLatin1String("level"), level}};
}

SubscribeLogResult SubscribeLogResult::fromJson(const QJsonObject &object)
{
    return {json::text(object, "level")};
}

} // namespace cmcp::admin
