#include "common/AdminLogRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

namespace {

using json::member;

constexpr auto kLogLine =
        json::fields(member("level", &LogLineEvent::level), member("logger", &LogLineEvent::logger),
                     member("text", &LogLineEvent::text), member("time", &LogLineEvent::time));
constexpr auto kSubscribe = json::fields(member("level", &SubscribeLogParams::level));
constexpr auto kSubscribed = json::fields(member("level", &SubscribeLogResult::level));

} // namespace

QJsonObject LogLineEvent::toJson() const
{
    return kLogLine.write(*this);
}

LogLineEvent LogLineEvent::fromJson(const QJsonObject &object)
{
    return kLogLine.read(object);
}

QJsonObject SubscribeLogParams::toJson() const
{
    return kSubscribe.write(*this);
}

SubscribeLogParams SubscribeLogParams::fromJson(const QJsonObject &object)
{
    return kSubscribe.read(object);
}

QJsonObject SubscribeLogResult::toJson() const
{
    return kSubscribed.write(*this);
}

SubscribeLogResult SubscribeLogResult::fromJson(const QJsonObject &object)
{
    return kSubscribed.read(object);
}

} // namespace cmcp::admin
