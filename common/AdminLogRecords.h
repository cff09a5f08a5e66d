#pragma once

#include "common/AdminProtocol.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>

// The admin channel's records of the daemon's log: a line, and the request that chooses which
// lines a console gets.
namespace cmcp::admin {

struct LogLineEvent
{
    static constexpr const char *event = eventLog;

    QString level; // spdlog's name: trace, debug, info, warning, error, critical
    QString logger;
    QString text;
    QDateTime time;

    QJsonObject toJson() const;
    static LogLineEvent fromJson(const QJsonObject &object);
};

// subscribeLog: lines at `level` and above from now on; "off" stops them.
struct SubscribeLogParams
{
    static constexpr const char *method = methodSubscribeLog;

    QString level; // trace, debug, info, warning (or warn), error, critical or off

    QJsonObject toJson() const;
    // The daemon judges the level (an unknown one is refused as bad_params).
    static SubscribeLogParams fromJson(const QJsonObject &object);
};

struct SubscribeLogResult
{
    QString level; // as the daemon understood it, in lower case

    QJsonObject toJson() const;
    static SubscribeLogResult fromJson(const QJsonObject &object);
};

} // namespace cmcp::admin
