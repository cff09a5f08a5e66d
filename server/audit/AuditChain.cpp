#include "audit/AuditChain.h"

#include "audit/Sha256.h"
#include "mcp/JsonWriter.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace cmcp::audit {

namespace {

const QByteArray hashPrefix = QByteArrayLiteral(",\"hash\":\"");
const QByteArray hashSuffix = QByteArrayLiteral("\"}");
const qsizetype sealLength = hashPrefix.size() + HashHexLength + hashSuffix.size();

// Integers up to 2^53 are exact in a double.
constexpr quint64 exactInDouble = quint64(1) << 53;

void appendDigits(QByteArray &out, auto value)
{
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    out.append(digits, end - digits);
}

bool isLowerHex(const QByteArray &text)
{
    if (text.size() != HashHexLength)
        return false;
    for (const char c : text)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

} // namespace

QByteArray genesisHash()
{
    return QByteArray(HashHexLength, '0');
}

QByteArray sha256Hex(const QByteArray &bytes)
{
    QByteArray hex;
    hex.reserve(HashHexLength);
    appendHex(hex, sha256(bytes));
    return hex;
}

SealedRecord seal(QJsonObject fields, quint64 seq, const QByteArray &prev)
{
    fields.insert(QLatin1String("seq"), double(seq));
    fields.insert(QLatin1String("prev"), QString::fromLatin1(prev));
    QByteArray body = QJsonDocument(fields).toJson(QJsonDocument::Compact);
    body.chop(1); // the closing brace: the hash goes in as the last field
    SealedRecord sealed;
    sealed.hash = sha256Hex(body);
    sealed.line = body + hashPrefix + sealed.hash + hashSuffix;
    return sealed;
}

SealedRecord seal(const RecordFields &fields, quint64 seq, const QByteArray &prev)
{
    // A field's value is a slice of fields.m_values, or (begin < 0) seq or prev, which are
    // written in their place.
    struct Field
    {
        const char *name;
        qsizetype begin;
        qsizetype end;
    };
    constexpr qsizetype seqField = -1;
    constexpr qsizetype prevField = -2;
    QVarLengthArray<Field, 18> all;
    const QByteArray &values = fields.m_values;
    for (qsizetype i = 0; i < fields.m_fields.size(); ++i) {
        const qsizetype begin = fields.m_fields[i].begin;
        const qsizetype end =
                i + 1 < fields.m_fields.size() ? fields.m_fields[i + 1].begin : values.size();
        all.append({fields.m_fields[i].name, begin, end});
    }
    all.append({"seq", seqField, 0});
    all.append({"prev", prevField, 0});
    // QJsonObject's order: by UTF-16 code units, which for ASCII names is strcmp's.
    std::sort(all.begin(), all.end(),
              [](const Field &a, const Field &b) { return std::strcmp(a.name, b.name) < 0; });
    QByteArray line;
    // The whole line and the newline the log adds, so that neither grows it again.
    line.reserve(values.size() + 16 * all.size() + 96 + sealLength + 1);
    for (const Field &field : all) {
        line += line.isEmpty() ? "{\"" : ",\"";
        line += field.name;
        line += "\":";
        if (field.begin == seqField)
            appendNumber(line, seq);
        else if (field.begin == prevField)
            json::appendString(line, prev);
        else
            line.append(values.constData() + field.begin, field.end - field.begin);
    }
    const Sha256Digest digest = sha256(line);
    line += hashPrefix;
    const qsizetype hashAt = line.size();
    appendHex(line, digest);
    line += hashSuffix;
    SealedRecord sealed;
    sealed.hash = line.sliced(hashAt, HashHexLength);
    sealed.line = std::move(line);
    return sealed;
}

void appendNumber(QByteArray &out, qint64 value)
{
    if (value > qint64(exactInDouble) || value < -qint64(exactInDouble))
        json::appendValue(out, QJsonValue(double(value)));
    else
        appendDigits(out, value);
}

void appendNumber(QByteArray &out, quint64 value)
{
    if (value > exactInDouble)
        json::appendValue(out, QJsonValue(double(value)));
    else
        appendDigits(out, value);
}

OpenedRecord open(const QByteArray &line)
{
    OpenedRecord record;
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(line, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        record.problem = QStringLiteral("not a JSON object (%1 at byte %2): truncated or edited")
                                 .arg(parseError.errorString())
                                 .arg(parseError.offset);
        return record;
    }
    const QJsonObject fields = document.object();
    const QJsonValue seq = fields.value(QLatin1String("seq"));
    record.prev = fields.value(QLatin1String("prev")).toString().toLatin1();
    record.hash = fields.value(QLatin1String("hash")).toString().toLatin1();
    // Integers up to 2^53 are exact in a double; the range check comes before the conversion.
    if (!seq.isDouble() || !(seq.toDouble() >= 1 && seq.toDouble() <= 9007199254740992.0)
        || seq.toDouble() != double(qint64(seq.toDouble()))) {
        record.problem = QStringLiteral("no valid seq field: edited");
        return record;
    }
    record.seq = quint64(seq.toDouble());
    if (!isLowerHex(record.prev) || !isLowerHex(record.hash)) {
        record.problem = QStringLiteral("prev or hash is not a SHA-256 in hex: edited");
        return record;
    }
    if (line.size() < sealLength || !line.endsWith(hashSuffix)
        || line.mid(line.size() - sealLength, hashPrefix.size()) != hashPrefix) {
        record.problem = QStringLiteral("the hash is not the last field: edited");
        return record;
    }
    record.hashMatches = sha256Hex(line.left(line.size() - sealLength)) == record.hash;
    return record;
}

} // namespace cmcp::audit
