#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QVarLengthArray>
#include <QString>

#include <optional>

namespace cmcp::audit {

// The line format of the audit log, shared by the writer and the verifier.
//
// A record is one line of compact JSON: the record's fields, `seq` (1, 2, 3, ... across rotated
// files) and `prev` (the hash of the record before; 64 zeros for the first record ever), then
// `"hash"` last: the SHA-256 of the line's bytes before `,"hash":"`. The hash covers the bytes
// exactly as written, so verification never depends on re-serializing JSON the same way.
// Editing a record breaks its own hash; editing it and recomputing the hash breaks the `prev`
// of the next record; deleting or reordering records breaks `seq` and `prev`.

inline constexpr int HashHexLength = 64;
QByteArray genesisHash(); // 64 '0's: the `prev` of the first record of a chain

QByteArray sha256Hex(const QByteArray &bytes);

struct SealedRecord
{
    QByteArray line; // without the newline
    QByteArray hash;
};

// `fields` must not hold seq, prev or hash.
SealedRecord seal(QJsonObject fields, quint64 seq, const QByteArray &prev);

// A record's fields already serialised: each name (plain ASCII, no escapes) with its value as
// compact JSON, in any order. Sealed, they are the same bytes as seal() writes for the
// QJsonObject of the same fields, without building that object or serialising it again.
class RecordFields
{
public:
    // Room for a typical call's record: appendString reserves exactly what each string needs,
    // which without this grows the buffer one string at a time.
    RecordFields() { m_values.reserve(1024); }

    // No fields, and the room kept for the next record's.
    void clear()
    {
        m_values.resize(0);
        m_fields.clear();
    }

    // Starts the field `name` (a literal, which outlives the record): its value's JSON is what
    // is appended to the returned buffer before the next call.
    QByteArray &add(const char *name)
    {
        m_fields.append({name, m_values.size()});
        return m_values;
    }

private:
    friend void seal(const RecordFields &fields, quint64 seq, const QByteArray &prev,
                     SealedRecord &sealed);
    struct Field
    {
        const char *name;
        qsizetype begin;
    };
    QByteArray m_values;
    QVarLengthArray<Field, 16> m_fields;
};

// `fields` must not hold seq, prev or hash.
SealedRecord seal(const RecordFields &fields, quint64 seq, const QByteArray &prev);
// The same into `sealed`, whose buffers are reused when they have the room: the log seals every
// record into the same one. The line has room left for the newline the log adds.
void seal(const RecordFields &fields, quint64 seq, const QByteArray &prev, SealedRecord &sealed);

// A record's numbers are JSON doubles: `value` written as QJsonValue(double(value)) is, without
// building the QJsonValue (its digits, for every integer a double holds exactly).
void appendNumber(QByteArray &out, qint64 value);
void appendNumber(QByteArray &out, quint64 value);

// A line as read back. Either `problem` says why it is not a well-formed record, or the fields
// are filled in; `hashMatches` tells whether its content still has the hash it carries.
struct OpenedRecord
{
    QString problem;
    quint64 seq = 0;
    QByteArray prev;
    QByteArray hash;
    bool hashMatches = false;
};
OpenedRecord open(const QByteArray &line);

} // namespace cmcp::audit
