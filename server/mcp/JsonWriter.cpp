#include "mcp/JsonWriter.h"

#include <QCborValue>
#include <QJsonDocument>
#include <QJsonArray>
#include <QLocale>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace cmcp::json {

namespace {

// For each byte: 0 when it stands for itself in a JSON string, else the letter of its short
// escape, or 'u' for \u00XX. Bytes of multi-byte UTF-8 sequences stand for themselves.
constexpr std::array<char, 256> escapes = [] {
    std::array<char, 256> table{};
    for (int c = 0; c < 0x20; ++c)
        table[c] = 'u';
    table['\b'] = 'b';
    table['\f'] = 'f';
    table['\n'] = 'n';
    table['\r'] = 'r';
    table['\t'] = 't';
    table['"'] = '"';
    table['\\'] = '\\';
    return table;
}();

void appendNumber(QByteArray &out, const QJsonValue &value)
{
    // QJsonValue keeps integers apart from doubles; QCborValue tells which, as toJson does.
    const QCborValue number = QCborValue::fromJsonValue(value);
    if (number.isInteger()) {
        out += QByteArray::number(number.toInteger());
        return;
    }
    const double d = number.toDouble();
    // JSON has no infinities or NaN (RFC 8259 section 6); toJson writes null as well.
    if (std::isfinite(d))
        out += QByteArray::number(d, 'g', QLocale::FloatingPointShortest);
    else
        out += "null";
}

void appendArray(QByteArray &out, const QJsonArray &array)
{
    out += '[';
    bool first = true;
    for (const QJsonValue &item : array) {
        if (!first)
            out += ',';
        first = false;
        appendValue(out, item);
    }
    out += ']';
}

} // namespace

void appendString(QByteArray &out, QByteArrayView utf8)
{
    static constexpr char hex[] = "0123456789abcdef";
    out.reserve(out.size() + utf8.size() + 2);
    out += '"';
    const char *run = utf8.data();
    const char *const end = run + utf8.size();
    for (const char *p = run; p != end; ++p) {
        // Eight bytes at a time while none needs an escape (no control character, quote or
        // backslash): large text is mostly such runs, and this was the serializer's hot loop.
        while (end - p >= 8) {
            quint64 word;
            std::memcpy(&word, p, sizeof word);
            constexpr quint64 ones = 0x0101010101010101ULL;
            constexpr quint64 highs = 0x8080808080808080ULL;
            const auto hasZeroByte = [](quint64 v) { return (v - ones) & ~v & highs; };
            const quint64 special = ((word - 0x20 * ones) & ~word & highs)
                    | hasZeroByte(word ^ ('"' * ones)) | hasZeroByte(word ^ ('\\' * ones));
            if (special)
                break;
            p += 8;
        }
        if (p == end)
            break;
        const char escape = escapes[uchar(*p)];
        if (!escape)
            continue;
        out.append(run, p - run);
        run = p + 1;
        if (escape == 'u') {
            const char sequence[] = {
                    '\\', 'u', '0', '0', hex[uchar(*p) >> 4], hex[uchar(*p) & 0xf]};
            out.append(sequence, sizeof sequence);
        } else {
            const char sequence[] = {'\\', escape};
            out.append(sequence, sizeof sequence);
        }
    }
    out.append(run, end - run);
    out += '"';
}

void appendText(QByteArray &out, const QString &text)
{
    if (Q_LIKELY(text.isValidUtf16())) {
        appendString(out, text.toUtf8());
    } else {
        // toJson writes an unpaired surrogate as \uXXXX, where toUtf8 would replace it.
        const QByteArray array = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
        out.append(array.constData() + 1, array.size() - 2);
    }
}

void appendValue(QByteArray &out, const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Bool:
        out += value.toBool() ? "true" : "false";
        break;
    case QJsonValue::Double:
        appendNumber(out, value);
        break;
    case QJsonValue::String:
        appendText(out, value.toString());
        break;
    case QJsonValue::Array:
        appendArray(out, value.toArray());
        break;
    case QJsonValue::Object:
        appendObject(out, value.toObject());
        break;
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        out += "null";
        break;
    }
}

void appendObject(QByteArray &out, const QJsonObject &object, const Utf8Fields &utf8Fields)
{
    out += '{';
    bool first = true;
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        if (!first)
            out += ',';
        first = false;
        const QString key = it.key();
        appendString(out, key.toUtf8());
        out += ':';
        const auto raw = std::find_if(utf8Fields.cbegin(), utf8Fields.cend(),
                                      [&key](const auto &field) { return field.first == key; });
        if (raw != utf8Fields.cend())
            appendString(out, raw->second);
        else
            appendValue(out, it.value());
    }
    out += '}';
}

QByteArray serialize(const QJsonValue &value)
{
    QByteArray out;
    appendValue(out, value);
    return out;
}

QByteArray serialize(const QJsonObject &object, const Utf8Fields &utf8Fields)
{
    QByteArray out;
    qsizetype size = 64;
    for (const auto &field : utf8Fields)
        size += field.second.size() + 16;
    out.reserve(size);
    appendObject(out, object, utf8Fields);
    return out;
}

} // namespace cmcp::json
