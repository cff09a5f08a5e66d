#include "audit/AuditRecord.h"

#include "audit/AuditChain.h"
#include "base/SecretRedaction.h"
#include "mcp/JsonWriter.h"
#include "mcp/ToolResult.h"

#include <QJsonArray>
#include <QVarLengthArray>

#include <algorithm>

namespace cmcp::audit {

namespace {

// `text` as a JSON string, as json::appendText writes it. Most strings of a record are short and
// ASCII (names, ids, numbers' notes): those are narrowed on the stack, without the UTF-8 copy
// that json::appendText allocates.
void appendText(QByteArray &out, const QString &text)
{
    constexpr qsizetype shortText = 256;
    if (text.size() <= shortText) {
        char narrow[shortText];
        const ushort *units = text.utf16();
        qsizetype i = 0;
        for (; i < text.size() && units[i] < 0x80; ++i)
            narrow[i] = char(units[i]);
        if (i == text.size()) {
            json::appendString(out, QByteArrayView(narrow, i));
            return;
        }
    }
    json::appendText(out, text);
}

// `text`'s length in UTF-8, as toUtf8() makes it; without the copy when it is ASCII.
qint64 utf8Length(const QString &text)
{
    for (const QChar unit : text) {
        if (unit.unicode() >= 0x80)
            return text.toUtf8().size();
    }
    return text.size();
}

// `at` as Qt::ISODateWithMs writes a UTC time ("2026-12-02T01:20:00.123Z"), as a JSON string,
// formatted directly: QDateTime::toString was 8% of a record's cost, and gmtime_r takes the time
// zone lock. Years outside 1 to 9999 are left to Qt, which has no year 0 and writes nothing for
// them.
void appendIsoTimeUtc(QByteArray &out, qint64 msecs)
{
    constexpr qint64 msPerDay = 86400000;
    const qint64 days = msecs >= 0 ? msecs / msPerDay : (msecs - msPerDay + 1) / msPerDay;
    const qint64 msOfDay = msecs - days * msPerDay;
    // The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
    // civil_from_days): eras of 400 years, each starting on March 1st.
    const qint64 shifted = days + 719468;
    const qint64 era = (shifted >= 0 ? shifted : shifted - 146096) / 146097;
    const qint64 dayOfEra = shifted - era * 146097;
    const qint64 yearOfEra =
            (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365;
    const qint64 dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
    const qint64 monthFromMarch = (5 * dayOfYear + 2) / 153;
    const int day = int(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1);
    const int month = int(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9);
    const qint64 year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
    if (year < 1 || year > 9999) {
        appendText(out, QDateTime::fromMSecsSinceEpoch(msecs, Qt::UTC).toString(Qt::ISODateWithMs));
        return;
    }
    const int ms = int(msOfDay % 1000);
    const int second = int(msOfDay / 1000 % 60);
    const int minute = int(msOfDay / 60000 % 60);
    const int hour = int(msOfDay / 3600000);
    const auto digits = [](char *at, int value, int count) {
        for (int i = count - 1; i >= 0; --i, value /= 10)
            at[i] = char('0' + value % 10);
    };
    char text[] = "\"YYYY-MM-DDThh:mm:ss.mmmZ\"";
    digits(text + 1, int(year), 4);
    digits(text + 6, month, 2);
    digits(text + 9, day, 2);
    digits(text + 12, hour, 2);
    digits(text + 15, minute, 2);
    digits(text + 18, second, 2);
    digits(text + 21, ms, 3);
    out.append(text, sizeof text - 1);
}

QString digestOf(const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    return QStringLiteral("%1 bytes in all, sha256 %2")
            .arg(utf8.size())
            .arg(QString::fromLatin1(sha256Hex(utf8)));
}

// A client-chosen string in a record's own fields (its name, a session id): cut, never refused,
// so that even an absurd value leaves a record of the call.
QString bounded(const QString &text)
{
    if (text.size() <= MaxFieldLength)
        return text;
    return QStringLiteral("%1… [%2]").arg(text.left(MaxFieldLength), digestOf(text));
}

// The placeholder the log writes instead of a secret.
const QString &redactedValue()
{
    static const QString placeholder = QLatin1String(RedactedValue);
    return placeholder;
}

// A string of the arguments as written: its inline secrets redacted, whether it is the client's,
// a cut one or a note of the writer's own ("3 more keys").
void appendArgumentText(QByteArray &out, const QString &text)
{
    appendText(out, redactInlineSecrets(text, redactedValue()));
}

// A call's arguments cut to a record of bounded size, whatever the client sent, and redacted,
// written straight to JSON. Long strings keep their start, length and sha256 (which still
// identify the exact value); objects and arrays keep their first members and count the rest;
// values nested too deep are named, not kept; once the whole record's budget of characters is
// spent, every further value is only counted. Cut first, so that what a file tool writes is
// digested as written and the redactor reads bounded text: a cut string keeps its start, where a
// secret's name stays before its value, and a PEM block cut short loses all it holds. Each
// string is redacted as it is written (redactInlineSecrets), each secret-named value masked.
class ArgumentWriter
{
public:
    explicit ArgumentWriter(QByteArray &out) : m_out(out) { }

    void object(const QJsonObject &object, int depth = 0)
    {
        Members members;
        m_out += '{';
        const qsizetype open = m_out.size();
        qsizetype kept = 0;
        for (auto it = object.begin(); it != object.end(); ++it, ++kept) {
            const qsizetype start = m_out.size();
            if (kept == MaxArgumentMembers || m_budget <= 0) {
                static const QString omitted = QStringLiteral("[omitted]");
                appendText(m_out, omitted);
                m_out += ':';
                appendArgumentText(m_out, QStringLiteral("%1 more keys").arg(object.size() - kept));
                m_out += ',';
                place(members, omitted, start);
                break;
            }
            const QString key = it.key().left(MaxArgumentKeyLength);
            m_budget -= key.size();
            appendText(m_out, key);
            m_out += ':';
            // Judged on the whole name: a secret's name cut short must not keep its value.
            if (looksLikeSecretKey(it.key()))
                appendText(m_out, redactedValue());
            else if (isDataArgument(key))
                data(it.value());
            else
                value(it.value(), depth + 1);
            m_out += ',';
            place(members, key, start);
        }
        if (m_out.size() > open)
            m_out.chop(1);
        m_out += '}';
    }

private:
    // The arguments that carry a file's bytes, not an instruction: what a model wrote is
    // identified by its length and sha256 (the file itself holds the text), so that a key, a
    // .env file or a password file written by file_write never lands in the log.
    static bool isDataArgument(QStringView key)
    {
        return key == u"content" || key == u"old_text" || key == u"new_text";
    }

    // The members of an object written so far: their names in order and where each starts.
    struct Members
    {
        QVarLengthArray<QString, 16> keys;
        QVarLengthArray<qsizetype, 16> starts;
    };

    // The member just written from `start` to the end of the output put where QJsonObject::insert
    // puts it: in the order of the names' UTF-16 code units, in place of a member of the same
    // name. The input's order is not always that one (a parsed object is in the order of its
    // names' code points, which differs for characters beyond U+FFFF), and names cut short can
    // become equal.
    void place(Members &members, const QString &key, qsizetype start)
    {
        const auto less = [](const QString &a, const QString &b) {
            return std::lexicographical_compare(a.utf16(), a.utf16() + a.size(), b.utf16(),
                                                b.utf16() + b.size());
        };
        const qsizetype index =
                std::lower_bound(members.keys.begin(), members.keys.end(), key, less)
                - members.keys.begin();
        if (index == members.keys.size()) {
            members.keys.append(key);
            members.starts.append(start);
            return;
        }
        const QByteArray member = m_out.sliced(start);
        m_out.truncate(start);
        const qsizetype at = members.starts[index];
        qsizetype replaced = 0;
        if (members.keys[index] == key) {
            const qsizetype end =
                    index + 1 < members.starts.size() ? members.starts[index + 1] : m_out.size();
            replaced = end - at;
            m_out.replace(at, replaced, member);
        } else {
            m_out.insert(at, member);
            members.keys.insert(index, key);
            members.starts.insert(index, at);
        }
        for (qsizetype i = index + 1; i < members.starts.size(); ++i)
            members.starts[i] += member.size() - replaced;
    }

    void data(const QJsonValue &value)
    {
        if (!value.isString()) {
            this->value(value, MaxArgumentDepth);
            return;
        }
        m_budget -= 100;
        appendArgumentText(m_out, QStringLiteral("[%1]").arg(digestOf(value.toString())));
    }

    void value(const QJsonValue &value, int depth)
    {
        if (value.isObject() || value.isArray()) {
            if (depth >= MaxArgumentDepth) {
                m_budget -= 40;
                appendArgumentText(
                        m_out,
                        QStringLiteral("[nested deeper than %1 levels]").arg(MaxArgumentDepth));
            } else if (value.isObject()) {
                object(value.toObject(), depth);
            } else {
                array(value.toArray(), depth);
            }
            return;
        }
        if (!value.isString()) {
            m_budget -= 8;
            json::appendValue(m_out, value);
            return;
        }
        const QString text = value.toString();
        const qsizetype room = std::clamp<qsizetype>(m_budget, 0, MaxArgumentStringLength);
        if (text.size() <= room) {
            m_budget -= text.size();
            appendArgumentText(m_out, text);
            return;
        }
        m_budget -= room + 100;
        appendArgumentText(m_out, QStringLiteral("%1… [%2]").arg(text.left(room), digestOf(text)));
    }

    void array(const QJsonArray &array, int depth)
    {
        m_out += '[';
        const qsizetype open = m_out.size();
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (i == MaxArgumentMembers || m_budget <= 0) {
                appendArgumentText(m_out,
                                   QStringLiteral("[%1 more items omitted]").arg(array.size() - i));
                m_out += ',';
                break;
            }
            value(array.at(i), depth + 1);
            m_out += ',';
        }
        if (m_out.size() > open)
            m_out.chop(1);
        m_out += ']';
    }

    QByteArray &m_out;
    qsizetype m_budget = MaxArgumentCharacters;
};

void appendMember(QByteArray &out, const char *name)
{
    out += '"';
    out += name;
    out += "\":";
}

// The job accounting the system tools put at the top of their structuredContent, written as an
// object; false (and nothing written) when the result holds none. Strings are bounded like an
// error message. Of what the sandbox refused the call's job: layer, rule and target (a URL
// without its query or fragment, which may carry secrets), each bounded like the message; for
// the seccomp filter the syscall and how many calls.
bool appendAccounting(QByteArray &out, const QJsonObject &structured)
{
    // In the order of the names' UTF-16 code units, as every object of a record.
    static const char *const fields[] = {
            "cancelled",  "cpu_ms",         "exit_code",        "insecure", "message",
            "oom_killed", "peak_memory_kb", "sandbox_refusals", "signal",   "success",
            "timed_out",  "truncated",      "wall_ms"};
    const qsizetype start = out.size();
    out += '{';
    const qsizetype open = out.size();
    for (const char *field : fields) {
        const QJsonValue value = structured.value(QLatin1String(field));
        if (qstrcmp(field, "sandbox_refusals") == 0) {
            const QJsonArray entries = value.toArray();
            if (entries.isEmpty())
                continue;
            appendMember(out, field);
            out += '[';
            for (const QJsonValue &entry : entries) {
                const QJsonObject refusal = entry.toObject();
                out += '{';
                const qsizetype refusalOpen = out.size();
                const QJsonValue count = refusal.value(QLatin1String("count"));
                if (count.isDouble()) {
                    appendMember(out, "count");
                    json::appendValue(out, count);
                    out += ',';
                }
                for (const char *key : {"layer", "rule", "syscall", "target"}) {
                    QString text = refusal.value(QLatin1String(key)).toString();
                    if (qstrcmp(key, "target") == 0)
                        text = text.section(QLatin1Char('?'), 0, 0).section(QLatin1Char('#'), 0, 0);
                    if (text.isEmpty())
                        continue;
                    appendMember(out, key);
                    appendText(out, text.left(MaxErrorMessageLength));
                    out += ',';
                }
                if (out.size() > refusalOpen)
                    out.chop(1);
                out += "},";
            }
            out.chop(1);
            out += "],";
        } else if (value.isString()) {
            appendMember(out, field);
            appendText(out, value.toString().left(MaxErrorMessageLength));
            out += ',';
        } else if (!value.isUndefined() && !value.isObject() && !value.isArray()) {
            appendMember(out, field);
            json::appendValue(out, value);
            out += ',';
        }
    }
    if (out.size() == open) {
        out.truncate(start);
        return false;
    }
    out.chop(1);
    out += '}';
    return true;
}

// What a record keeps of a result: isError, how many content blocks and text bytes, the job's
// accounting, and the message of an unstructured error (a refusal, a bad path: a message for the
// model). Never the content itself.
void appendResultSummary(QByteArray &out, const ToolResult &result)
{
    const qsizetype blocks = result.content.size() + (result.structuredJson.isEmpty() ? 0 : 1);
    qint64 textBytes = result.structuredJson.size();
    for (const QJsonValue &block : result.content)
        textBytes += utf8Length(block.toObject().value(QLatin1String("text")).toString());
    out += '{';
    if (result.structuredContent) {
        const qsizetype start = out.size();
        appendMember(out, "accounting");
        if (appendAccounting(out, *result.structuredContent))
            out += ',';
        else
            out.truncate(start);
    }
    appendMember(out, "bytes");
    appendNumber(out, textBytes);
    out += ',';
    appendMember(out, "contentBlocks");
    appendNumber(out, qint64(blocks));
    out += ',';
    if (!result.structuredContent && result.isError && !result.content.isEmpty()) {
        const QString message =
                result.content.first().toObject().value(QLatin1String("text")).toString();
        appendMember(out, "error");
        appendText(out, message.left(MaxErrorMessageLength));
        out += ',';
    }
    appendMember(out, "isError");
    out += result.isError ? "true}" : "false}";
}

void addCallFields(RecordFields &fields, const ToolCallRecord &call, const char *event, qint64 at)
{
    json::appendString(fields.add("event"), event);
    appendIsoTimeUtc(fields.add("time"), at);
    appendNumber(fields.add("call"), call.callId);
    appendText(fields.add("session"), bounded(call.sessionId));
    appendText(fields.add("transport"), bounded(call.transport));
    appendText(fields.add("client"), bounded(call.clientName));
    appendText(fields.add("tool"), bounded(call.tool));
    if (!call.taskId.isEmpty())
        appendText(fields.add("task"), call.taskId);
}

} // namespace

void callStartedRecord(RecordFields &fields, const ToolCallRecord &call, qint64 at)
{
    fields.clear();
    addCallFields(fields, call, "call_started", at);
    ArgumentWriter(fields.add("arguments")).object(call.arguments);
}

void callFinishedRecord(RecordFields &fields, const ToolCallRecord &call, const ToolResult *result,
                        qint64 at)
{
    fields.clear();
    addCallFields(fields, call, "call_finished", at);
    appendText(fields.add("outcome"), toolCallOutcomeName(call.outcome));
    appendNumber(fields.add("durationMs"), call.durationMs);
    if (!call.detail.isEmpty())
        appendText(fields.add("detail"), call.detail.left(MaxErrorMessageLength));
    if (result)
        appendResultSummary(fields.add("result"), *result);
}

} // namespace cmcp::audit
