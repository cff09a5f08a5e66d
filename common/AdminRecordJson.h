#pragma once

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

#include <optional>
#include <tuple>
#include <type_traits>

// How the admin records (Admin*Records.h) read and write their fields. Reading is lenient: a
// field that is absent or of another type reads as its default, since a side ignores what it
// does not know and a newer daemon may leave out what an older console expects.
//
// A record declares its fields once, as a table both directions use:
//   constexpr auto kFields = json::fields(json::member("name", &SettingRecord::name), ...);
//   CMCP_ADMIN_RECORD_JSON(SettingRecord, kFields) // its toJson and fromJson
namespace cmcp::admin::json {

inline QJsonValue field(const QJsonObject &object, const char *key)
{
    return object.value(QLatin1String(key));
}

inline QString text(const QJsonObject &object, const char *key)
{
    return field(object, key).toString();
}

template<typename Value>
constexpr bool isList = false;
template<typename Value>
constexpr bool isList<QList<Value>> = true;

// A field's value as it travels. JSON numbers are doubles; counts and ids are whole numbers.
// Times travel as ISO 8601 with milliseconds, UTC ("2026-01-01T10:00:00.000Z"); an invalid time
// as "". A nested record is its own object, a list of records an array of them.
template<typename Value>
QJsonValue toValue(const Value &value)
{
    if constexpr (std::is_same_v<Value, qint64>)
        return double(value);
    else if constexpr (std::is_same_v<Value, QDateTime>)
        return value.toString(Qt::ISODateWithMs);
    else if constexpr (std::is_same_v<Value, QStringList>)
        return QJsonArray::fromStringList(value);
    else if constexpr (isList<Value>) {
        QJsonArray list;
        for (const auto &record : value)
            list.append(record.toJson());
        return list;
    } else if constexpr (requires { value.toJson(); })
        return value.toJson();
    else
        return QJsonValue(value); // a text, a flag, an int or an object as it is
}

template<typename Value>
Value fromValue(const QJsonValue &value)
{
    if constexpr (std::is_same_v<Value, QString>)
        return value.toString();
    else if constexpr (std::is_same_v<Value, bool>)
        return value.toBool();
    else if constexpr (std::is_integral_v<Value>)
        return Value(qint64(value.toDouble()));
    else if constexpr (std::is_same_v<Value, QJsonObject>)
        return value.toObject();
    else if constexpr (std::is_same_v<Value, QDateTime>)
        return QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
    else if constexpr (isList<Value>) {
        Value list;
        for (const QJsonValue &item : value.toArray())
            list.append(fromValue<typename Value::value_type>(item));
        return list;
    } else
        return Value::fromJson(value.toObject());
}

template<typename Value>
Value read(const QJsonObject &object, const char *key)
{
    return fromValue<Value>(field(object, key));
}

// What a field's absence looks like. Written: always sent. Omitted: an empty value or an
// absent optional one is left out, and an optional one is read only when its key is there.
// Null: an absent optional number is sent as null, and read only when it is a number.
enum class Absent { Written, Omitted, Null };

template<typename Value>
constexpr bool isOptional = false;
template<typename Value>
constexpr bool isOptional<std::optional<Value>> = true;

// One field of a record: its key and the member that holds it.
template<typename Record, typename Value>
struct Member
{
    const char *key;
    Value Record::*value;
    Absent absent;

    void write(QJsonObject &object, const Record &record) const
    {
        const Value &held = record.*value;
        if constexpr (isOptional<Value>) {
            if (held)
                object.insert(QLatin1String(key), toValue(*held));
            else if (absent == Absent::Null)
                object.insert(QLatin1String(key), QJsonValue(QJsonValue::Null));
        } else {
            if constexpr (requires { held.isEmpty(); })
                if (absent == Absent::Omitted && held.isEmpty())
                    return;
            object.insert(QLatin1String(key), toValue(held));
        }
    }

    void read(const QJsonObject &object, Record &record) const
    {
        const QJsonValue found = field(object, key);
        if constexpr (isOptional<Value>) {
            using Inner = typename Value::value_type;
            const bool present =
                    absent == Absent::Null ? found.isDouble() : object.contains(QLatin1String(key));
            if (present)
                record.*value = fromValue<Inner>(found);
        } else {
            record.*value = fromValue<Value>(found);
        }
    }
};

template<typename Record, typename Value>
constexpr Member<Record, Value> member(const char *key, Value Record::*value,
                                       Absent absent = Absent::Written)
{
    return {key, value, absent};
}

// A record's fields, in both directions.
template<typename Record, typename... Values>
struct Fields
{
    std::tuple<Member<Record, Values>...> members;

    QJsonObject write(const Record &record) const
    {
        QJsonObject object;
        writeInto(object, record);
        return object;
    }

    // Beside what `object` already holds: a record whose fields stand flat in another's.
    void writeInto(QJsonObject &object, const Record &record) const
    {
        std::apply([&](const auto &...each) { (each.write(object, record), ...); }, members);
    }

    Record read(const QJsonObject &object) const
    {
        Record record{};
        std::apply([&](const auto &...each) { (each.read(object, record), ...); }, members);
        return record;
    }
};

template<typename Record, typename... Values>
constexpr Fields<Record, Values...> fields(Member<Record, Values>... members)
{
    return {{members...}};
}

} // namespace cmcp::admin::json

// A record's toJson and fromJson, both through its field table.
#define CMCP_ADMIN_RECORD_JSON(Record, table)                                                      \
  QJsonObject Record::toJson() const                                                               \
  {                                                                                                \
    return table.write(*this);                                                                     \
  }                                                                                                \
  Record Record::fromJson(const QJsonObject &object)                                               \
  {                                                                                                \
    return table.read(object);                                                                     \
  }
