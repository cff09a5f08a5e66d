#include "audit/AuditChain.h"

#include "audit/Sha256.h"
#include "mcp/JsonWriter.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

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
    SealedRecord sealed;
    seal(fields, seq, prev, sealed);
    return sealed;
}

void seal(const RecordFields &fields, quint64 seq, const QByteArray &prev, SealedRecord &sealed)
{
    struct Field
    {
        const char *name;
        QByteArrayView json;
        bool quoted = false; // `json` is a string's text that needs no escape
    };
    // seq and prev as JSON, in the place their names give them among the rest.
    QVarLengthArray<char, 32> seqJson;
    if (seq <= exactInDouble) {
        seqJson.resize(24);
        seqJson.resize(std::to_chars(seqJson.begin(), seqJson.end(), seq).ptr - seqJson.begin());
    } else {
        QByteArray number;
        appendNumber(number, seq);
        seqJson.append(number.constData(), number.size());
    }
    // prev is a hash in hex, which needs no escape; anything else is escaped.
    const bool prevPlain = std::all_of(prev.begin(), prev.end(), [](char c) {
        return uchar(c) >= 0x20 && c != '"' && c != '\\';
    });
    QByteArray prevJson;
    if (!prevPlain)
        json::appendString(prevJson, prev);
    QVarLengthArray<Field, 18> all;
    const QByteArray &values = fields.m_values;
    for (qsizetype i = 0; i < fields.m_fields.size(); ++i) {
        const qsizetype begin = fields.m_fields[i].begin;
        const qsizetype end =
                i + 1 < fields.m_fields.size() ? fields.m_fields[i + 1].begin : values.size();
        all.append({fields.m_fields[i].name, QByteArrayView(values).sliced(begin, end - begin)});
    }
    all.append({"seq", QByteArrayView(seqJson.constData(), seqJson.size())});
    all.append(prevPlain ? Field{"prev", prev, true} : Field{"prev", prevJson});
    // QJsonObject's order: by UTF-16 code units, which for ASCII names is strcmp's.
    std::sort(all.begin(), all.end(),
              [](const Field &a, const Field &b) { return std::strcmp(a.name, b.name) < 0; });
    // Each field is `,"name":json` (the first opens with `{` instead of the comma).
    qsizetype bodyLength = 0;
    for (const Field &field : all)
        bodyLength +=
                4 + qsizetype(std::strlen(field.name)) + field.json.size() + (field.quoted ? 2 : 0);
    QByteArray &line = sealed.line;
    // The newline the log adds has its room too, so that nothing grows the line again.
    line.reserve(bodyLength + sealLength + 1);
    line.resize(bodyLength);
    char *out = line.data();
    char separator = '{';
    for (const Field &field : all) {
        *out++ = std::exchange(separator, ',');
        *out++ = '"';
        const size_t nameLength = std::strlen(field.name);
        std::memcpy(out, field.name, nameLength);
        out += nameLength;
        *out++ = '"';
        *out++ = ':';
        if (field.quoted)
            *out++ = '"';
        std::memcpy(out, field.json.data(), size_t(field.json.size()));
        out += field.json.size();
        if (field.quoted)
            *out++ = '"';
    }
    const Sha256Digest digest = sha256(line);
    line += hashPrefix;
    const qsizetype hashAt = line.size();
    appendHex(line, digest);
    line += hashSuffix;
    sealed.hash.resize(HashHexLength);
    std::memcpy(sealed.hash.data(), line.constData() + hashAt, HashHexLength);
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
