#pragma once

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

// How the admin records (Admin*Records.h) read and write their fields. Reading is lenient: a
// field that is absent or of another type reads as its default, since a side ignores what it
// does not know and a newer daemon may leave out what an older console expects.
namespace cmcp::admin::json {

inline QJsonValue field(const QJsonObject &object, const char *key)
{
    return object.value(QLatin1String(key));
}

inline QString text(const QJsonObject &object, const char *key)
{
    return field(object, key).toString();
}

// JSON numbers are doubles; counts and ids are whole numbers.
inline qint64 integer(const QJsonObject &object, const char *key)
{
    return qint64(field(object, key).toDouble());
}

inline bool flag(const QJsonObject &object, const char *key)
{
    return field(object, key).toBool();
}

inline QStringList texts(const QJsonObject &object, const char *key)
{
    QStringList list;
    for (const QJsonValue &item : field(object, key).toArray())
        list.append(item.toString());
    return list;
}

// Times travel as ISO 8601 with milliseconds, UTC ("2026-01-01T10:00:00.000Z"); an invalid time
// as "".
inline QString timeText(const QDateTime &time)
{
    return time.toString(Qt::ISODateWithMs);
}

inline QDateTime time(const QJsonObject &object, const char *key)
{
    return QDateTime::fromString(text(object, key), Qt::ISODateWithMs);
}

// Every object of an array of records, read with Record::fromJson.
template<typename Record>
QList<Record> records(const QJsonObject &object, const char *key)
{
    QList<Record> list;
    for (const QJsonValue &item : field(object, key).toArray())
        list.append(Record::fromJson(item.toObject()));
    return list;
}

template<typename Record>
QJsonArray array(const QList<Record> &records)
{
    QJsonArray list;
    for (const Record &record : records)
        list.append(record.toJson());
    return list;
}

} // namespace cmcp::admin::json
