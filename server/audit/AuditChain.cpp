#include "audit/AuditChain.h"

#include "mcp/JsonWriter.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <openssl/sha.h>

#include <algorithm>
#include <cstring>

namespace cmcp::audit {

namespace {

const QByteArray hashPrefix = QByteArrayLiteral(",\"hash\":\"");
const QByteArray hashSuffix = QByteArrayLiteral("\"}");
const qsizetype sealLength = hashPrefix.size() + HashHexLength + hashSuffix.size();

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
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char *>(bytes.constData()), size_t(bytes.size()),
           digest);
    return QByteArray(reinterpret_cast<const char *>(digest), sizeof digest).toHex();
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
    struct Field
    {
        const char *name;
        QByteArrayView json;
    };
    QByteArray seqJson;
    json::appendValue(seqJson, QJsonValue(double(seq)));
    QByteArray prevJson;
    json::appendString(prevJson, prev);
    QVarLengthArray<Field, 18> all;
    const QByteArray &values = fields.m_values;
    for (qsizetype i = 0; i < fields.m_fields.size(); ++i) {
        const qsizetype begin = fields.m_fields[i].begin;
        const qsizetype end =
                i + 1 < fields.m_fields.size() ? fields.m_fields[i + 1].begin : values.size();
        all.append({fields.m_fields[i].name, QByteArrayView(values).sliced(begin, end - begin)});
    }
    all.append({"seq", seqJson});
    all.append({"prev", prevJson});
    // QJsonObject's order: by UTF-16 code units, which for ASCII names is strcmp's.
    std::sort(all.begin(), all.end(),
              [](const Field &a, const Field &b) { return std::strcmp(a.name, b.name) < 0; });
    QByteArray body;
    body.reserve(values.size() + 16 * all.size() + 96 + sealLength);
    for (const Field &field : all) {
        body += body.isEmpty() ? "{\"" : ",\"";
        body += field.name;
        body += "\":";
        body += field.json;
    }
    SealedRecord sealed;
    sealed.hash = sha256Hex(body);
    sealed.line = std::move(body);
    sealed.line += hashPrefix;
    sealed.line += sealed.hash;
    sealed.line += hashSuffix;
    return sealed;
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
