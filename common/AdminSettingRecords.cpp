#include "common/AdminSettingRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

QJsonObject SettingRecord::toJson() const
{
    return {{QLatin1String("name"), name},
            {QLatin1String("group"), group},
            {QLatin1String("type"), type},
            {QLatin1String("value"), value},
            {QLatin1String("origin"), origin},
            {QLatin1String("help"), help},
            {QLatin1String("allowed"), allowed},
            {QLatin1String("choices"), QJsonArray::fromStringList(choices)},
            {QLatin1String("live"), live},
            {QLatin1String("secret"), secret}};
}

SettingRecord SettingRecord::fromJson(const QJsonObject &object)
{
    SettingRecord setting;
    setting.name = json::text(object, "name");
    setting.group = json::text(object, "group");
    setting.type = json::text(object, "type");
    setting.value = json::text(object, "value");
    setting.origin = json::text(object, "origin");
    setting.help = json::text(object, "help");
    setting.allowed = json::text(object, "allowed");
    setting.choices = json::texts(object, "choices");
    setting.live = json::flag(object, "live");
    setting.secret = json::flag(object, "secret");
    return setting;
}

QJsonObject SettingChangedEvent::toJson() const
{
    return {{QLatin1String("setting"), setting.toJson()}};
}

SettingChangedEvent SettingChangedEvent::fromJson(const QJsonObject &object)
{
    return {SettingRecord::fromJson(json::field(object, "setting").toObject())};
}

QJsonObject SetSettingParams::toJson() const
{
    return {{QLatin1String("name"), name}, {QLatin1String("value"), value}};
}

std::optional<SetSettingParams> SetSettingParams::fromJson(const QJsonObject &object)
{
    const QString name = json::text(object, "name");
    const QJsonValue value = json::field(object, "value");
    if (name.isEmpty() || !value.isString())
        return std::nullopt;
    return SetSettingParams{name, value.toString()};
}

QJsonObject SetSettingResult::toJson() const
{
    return {{QLatin1String("setting"), setting.toJson()},
            {QLatin1String("appliedLive"), appliedLive},
            {QLatin1String("restartRequired"), restartRequired},
            {QLatin1String("note"), note}};
}

SetSettingResult SetSettingResult::fromJson(const QJsonObject &object)
{
    return {SettingRecord::fromJson(json::field(object, "setting").toObject()),
            json::flag(object, "appliedLive"), json::flag(object, "restartRequired"),
            json::text(object, "note")};
}

} // namespace cmcp::admin
