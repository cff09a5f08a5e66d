#pragma once

#include "common/AdminProtocol.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

// The admin channel's records of the daemon's settings: each setting as the console shows it,
// its change, and the request that changes one.
namespace cmcp::admin {

// The "setting" object.
struct SettingRecord
{
    QString name;
    QString group;
    QString type; // text, integer, boolean, list or choice
    QString value; // a secret's value is masked (MaskedValue) unless it is empty
    QString origin; // where the value comes from, e.g. "default file", "admin console"
    QString help;
    QString allowed; // the allowed values, for people
    QStringList choices; // a choice's values
    bool live = false; // whether a change applies while the daemon runs
    bool secret = false;

    QJsonObject toJson() const;
    static SettingRecord fromJson(const QJsonObject &object);
};

struct SettingChangedEvent
{
    static constexpr const char *event = eventSettingChanged;

    SettingRecord setting;

    QJsonObject toJson() const;
    static SettingChangedEvent fromJson(const QJsonObject &object);
};

struct SetSettingParams
{
    static constexpr const char *method = methodSetSetting;

    QString name;
    QString value;

    QJsonObject toJson() const;
    // nullopt unless name is a string that is not empty and value is a string.
    static std::optional<SetSettingParams> fromJson(const QJsonObject &object);
};

struct SetSettingResult
{
    SettingRecord setting; // as it is now
    bool appliedLive = false;
    bool restartRequired = false;
    QString note; // e.g. that the environment sets it too, and wins at the next start

    QJsonObject toJson() const;
    static SetSettingResult fromJson(const QJsonObject &object);
};

} // namespace cmcp::admin
