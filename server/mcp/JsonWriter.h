#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

#include <utility>

// Compact JSON serialization straight to UTF-8, without QJsonDocument. QJsonDocument::toJson
// expands every string to UTF-16 and back, and a QJsonValue built from text that is already UTF-8
// costs a decode as well; for results of megabytes those copies dominate the daemon's CPU. The
// output is what QJsonDocument::toJson(Compact) writes: keys in QJsonObject order, the same
// escapes, numbers in the shortest form that reads back exactly.
namespace cmcp::json {

// String fields of an object whose text is given as UTF-8 bytes instead of read from the object.
using Utf8Fields = QList<std::pair<QString, QByteArray>>;

// `utf8` must be valid UTF-8; it is written as a quoted JSON string.
void appendString(QByteArray &out, QByteArrayView utf8);
// `text` as a quoted JSON string, as toJson writes it (an unpaired surrogate included).
void appendText(QByteArray &out, const QString &text);
void appendValue(QByteArray &out, const QJsonValue &value);
// Fields named in `utf8Fields` are written from their bytes; `object` need not hold the same text.
void appendObject(QByteArray &out, const QJsonObject &object, const Utf8Fields &utf8Fields = {});

QByteArray serialize(const QJsonValue &value);
QByteArray serialize(const QJsonObject &object, const Utf8Fields &utf8Fields = {});

} // namespace cmcp::json
