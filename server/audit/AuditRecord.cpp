#include "audit/AuditRecord.h"

#include "audit/AuditChain.h"
#include "common/SecretRedaction.h"
#include "mcp/JsonWriter.h"
#include "mcp/ToolResult.h"

#include <QJsonArray>
#include <QVarLengthArray>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace cmcp::audit {

namespace {

// `at` as Qt::ISODateWithMs writes a UTC time ("2026-12-02T01:20:00.123Z"), formatted directly:
// QDateTime::toString was 8% of a record's cost. Years outside 1 to 9999 are left to Qt, which
// has no year 0 (gmtime's year 0 is its year -1) and writes nothing for them.
QString isoTimeUtc(qint64 msecs)
{
    const time_t seconds = time_t(msecs >= 0 ? msecs / 1000 : (msecs - 999) / 1000);
    tm fields{};
    if (!gmtime_r(&seconds, &fields) || fields.tm_year + 1900 < 1 || fields.tm_year + 1900 > 9999)
        return QDateTime::fromMSecsSinceEpoch(msecs, Qt::UTC).toString(Qt::ISODateWithMs);
    char text[32];
    const int length =
            std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                          fields.tm_year + 1900, fields.tm_mon + 1, fields.tm_mday, fields.tm_hour,
                          fields.tm_min, fields.tm_sec, int(msecs - qint64(seconds) * 1000));
    return QString::fromLatin1(text, length);
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
    json::appendText(out, redactInlineSecrets(text, redactedValue()));
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
                json::appendText(m_out, omitted);
                m_out += ':';
                appendArgumentText(m_out, QStringLiteral("%1 more keys").arg(object.size() - kept));
                m_out += ',';
                place(members, omitted, start);
                break;
            }
            const QString key = it.key().left(MaxArgumentKeyLength);
            m_budget -= key.size();
            json::appendText(m_out, key);
            m_out += ':';
            // Judged on the whole name: a secret's name cut short must not keep its value.
            if (looksLikeSecretKey(it.key()))
                json::appendText(m_out, redactedValue());
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
                    json::appendText(out, text.left(MaxErrorMessageLength));
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
            json::appendText(out, value.toString().left(MaxErrorMessageLength));
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
        textBytes += block.toObject().value(QLatin1String("text")).toString().toUtf8().size();
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
    json::appendValue(out, QJsonValue(double(textBytes)));
    out += ',';
    appendMember(out, "contentBlocks");
    json::appendValue(out, QJsonValue(double(blocks)));
    out += ',';
    if (!result.structuredContent && result.isError && !result.content.isEmpty()) {
        const QString message =
                result.content.first().toObject().value(QLatin1String("text")).toString();
        appendMember(out, "error");
        json::appendText(out, message.left(MaxErrorMessageLength));
        out += ',';
    }
    appendMember(out, "isError");
    out += result.isError ? "true}" : "false}";
}

void addCallFields(RecordFields &fields, const ToolCallRecord &call, const char *event, qint64 at)
{
    json::appendString(fields.add("event"), event);
    json::appendText(fields.add("time"), isoTimeUtc(at));
    json::appendValue(fields.add("call"), QJsonValue(double(call.callId)));
    json::appendText(fields.add("session"), bounded(call.sessionId));
    json::appendText(fields.add("transport"), bounded(call.transport));
    json::appendText(fields.add("client"), bounded(call.clientName));
    json::appendText(fields.add("tool"), bounded(call.tool));
    if (!call.taskId.isEmpty())
        json::appendText(fields.add("task"), call.taskId);
}

} // namespace

RecordFields callStartedRecord(const ToolCallRecord &call, qint64 at)
{
    RecordFields fields;
    addCallFields(fields, call, "call_started", at);
    ArgumentWriter(fields.add("arguments")).object(call.arguments);
    return fields;
}

RecordFields callFinishedRecord(const ToolCallRecord &call, const ToolResult *result, qint64 at)
{
    RecordFields fields;
    addCallFields(fields, call, "call_finished", at);
    json::appendText(fields.add("outcome"), toolCallOutcomeName(call.outcome));
    json::appendValue(fields.add("durationMs"), QJsonValue(double(call.durationMs)));
    if (!call.detail.isEmpty())
        json::appendText(fields.add("detail"), call.detail.left(MaxErrorMessageLength));
    if (result)
        appendResultSummary(fields.add("result"), *result);
    return fields;
}

} // namespace cmcp::audit
