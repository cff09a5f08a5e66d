#include "AuditRecordReference.h"

#include "audit/AuditChain.h"
#include "audit/AuditRecord.h"
#include "base/SecretRedaction.h"
#include "mcp/ToolResult.h"

#include <QDateTime>
#include <QJsonArray>

#include <algorithm>

namespace cmcp::audit::reference {

namespace {

// The form Qt writes a UTC time in with milliseconds ("2026-12-02T01:20:00.123Z").
QString isoTimeUtc(qint64 msecs)
{
    return QDateTime::fromMSecsSinceEpoch(msecs, Qt::UTC).toString(Qt::ISODateWithMs);
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

// Cuts a call's arguments to a record of bounded size, whatever the client sent: long strings
// keep their start, length and sha256 (which still identify the exact value); objects and arrays
// keep their first members and count the rest; values nested too deep are named, not kept; and
// once the whole record's budget of characters is spent, every further value is only counted.
class ArgumentCondenser
{
public:
    QJsonObject object(const QJsonObject &object, int depth = 0)
    {
        QJsonObject out;
        qsizetype kept = 0;
        for (auto it = object.begin(); it != object.end(); ++it, ++kept) {
            if (kept == MaxArgumentMembers || m_budget <= 0) {
                out.insert(QStringLiteral("[omitted]"),
                           QStringLiteral("%1 more keys").arg(object.size() - kept));
                break;
            }
            const QString key = it.key().left(MaxArgumentKeyLength);
            m_budget -= key.size();
            // Judged on the whole name: a secret's name cut short must not keep its value.
            if (looksLikeSecretKey(it.key()))
                out.insert(key, QLatin1String(RedactedValue));
            else
                out.insert(key,
                           isDataArgument(key) ? data(it.value()) : value(it.value(), depth + 1));
        }
        return out;
    }

private:
    // The arguments that carry a file's bytes, not an instruction: what a model wrote is
    // identified by its length and sha256 (the file itself holds the text), so that a key, a
    // .env file or a password file written by file_write never lands in the log.
    static bool isDataArgument(QStringView key)
    {
        return key == u"content" || key == u"old_text" || key == u"new_text";
    }

    QJsonValue data(const QJsonValue &value)
    {
        if (!value.isString())
            return this->value(value, MaxArgumentDepth);
        m_budget -= 100;
        return QStringLiteral("[%1]").arg(digestOf(value.toString()));
    }

    QJsonValue value(const QJsonValue &value, int depth)
    {
        if (value.isObject() || value.isArray()) {
            if (depth >= MaxArgumentDepth) {
                m_budget -= 40;
                return QStringLiteral("[nested deeper than %1 levels]").arg(MaxArgumentDepth);
            }
            return value.isObject() ? QJsonValue(object(value.toObject(), depth))
                                    : QJsonValue(array(value.toArray(), depth));
        }
        if (!value.isString()) {
            m_budget -= 8;
            return value;
        }
        const QString text = value.toString();
        const qsizetype room = std::clamp<qsizetype>(m_budget, 0, MaxArgumentStringLength);
        if (text.size() <= room) {
            m_budget -= text.size();
            return text;
        }
        m_budget -= room + 100;
        return QStringLiteral("%1… [%2]").arg(text.left(room), digestOf(text));
    }

    QJsonArray array(const QJsonArray &array, int depth)
    {
        QJsonArray out;
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (i == MaxArgumentMembers || m_budget <= 0) {
                out.append(QStringLiteral("[%1 more items omitted]").arg(array.size() - i));
                break;
            }
            out.append(value(array.at(i), depth + 1));
        }
        return out;
    }

    qsizetype m_budget = MaxArgumentCharacters;
};

QJsonObject callFields(const ToolCallRecord &call, const char *event, qint64 at)
{
    QJsonObject fields{
            {QLatin1String("event"), QLatin1String(event)},
            {QLatin1String("time"), isoTimeUtc(at)},
            {QLatin1String("call"), double(call.callId)},
            {QLatin1String("session"), bounded(call.sessionId)},
            {QLatin1String("transport"), bounded(call.transport)},
            {QLatin1String("client"), bounded(call.clientName)},
            {QLatin1String("tool"), bounded(call.tool)},
    };
    if (!call.taskId.isEmpty())
        fields.insert(QLatin1String("task"), call.taskId);
    return fields;
}

// The job accounting the system tools put at the top of their structuredContent.
QJsonObject accounting(const QJsonObject &structured)
{
    static const char *const fields[] = {"success",   "exit_code",      "signal",    "timed_out",
                                         "cancelled", "oom_killed",     "truncated", "wall_ms",
                                         "cpu_ms",    "peak_memory_kb", "insecure",  "message"};
    QJsonObject out;
    for (const char *field : fields) {
        const QJsonValue value = structured.value(QLatin1String(field));
        if (value.isString())
            out.insert(QLatin1String(field), value.toString().left(MaxErrorMessageLength));
        else if (!value.isUndefined() && !value.isObject() && !value.isArray())
            out.insert(QLatin1String(field), value);
    }
    // What the sandbox refused the call's job: layer, rule and target (a URL without its query
    // or fragment, which may carry secrets), each bounded like the message; for the seccomp
    // filter the syscall and how many calls.
    QJsonArray refusals;
    for (const QJsonValue &entry : structured.value(QLatin1String("sandbox_refusals")).toArray()) {
        const QJsonObject refusal = entry.toObject();
        QJsonObject kept;
        for (const char *key : {"layer", "rule", "target", "syscall"}) {
            QString text = refusal.value(QLatin1String(key)).toString();
            if (qstrcmp(key, "target") == 0)
                text = text.section(QLatin1Char('?'), 0, 0).section(QLatin1Char('#'), 0, 0);
            if (!text.isEmpty())
                kept.insert(QLatin1String(key), text.left(MaxErrorMessageLength));
        }
        const QJsonValue count = refusal.value(QLatin1String("count"));
        if (count.isDouble())
            kept.insert(QLatin1String("count"), count);
        refusals.append(kept);
    }
    if (!refusals.isEmpty())
        out.insert(QLatin1String("sandbox_refusals"), refusals);
    return out;
}

QJsonObject resultSummary(const ToolResult &result)
{
    // As many as contentBlocks() holds, without building them: the text block of structuredJson
    // is a copy of the whole result.
    const qsizetype blocks = result.content.size() + (result.structuredJson.isEmpty() ? 0 : 1);
    qint64 textBytes = result.structuredJson.size();
    for (const QJsonValue &block : result.content)
        textBytes += block.toObject().value(QLatin1String("text")).toString().toUtf8().size();
    QJsonObject summary{{QLatin1String("isError"), result.isError},
                        {QLatin1String("contentBlocks"), double(blocks)},
                        {QLatin1String("bytes"), double(textBytes)}};
    if (result.structuredContent) {
        const QJsonObject jobAccounting = accounting(*result.structuredContent);
        if (!jobAccounting.isEmpty())
            summary.insert(QLatin1String("accounting"), jobAccounting);
    } else if (result.isError && !result.content.isEmpty()) {
        // An unstructured error is a message for the model (a refusal, a bad path): keep it.
        const QString message =
                result.content.first().toObject().value(QLatin1String("text")).toString();
        summary.insert(QLatin1String("error"), message.left(MaxErrorMessageLength));
    }
    return summary;
}

} // namespace

QJsonObject callStartedFields(const ToolCallRecord &call, qint64 at)
{
    QJsonObject fields = callFields(call, "call_started", at);
    // Cut first, so that what a file tool writes is digested as written and the redactor reads
    // bounded text; a cut string keeps its start, where a secret's name stays before its value,
    // and a PEM block cut short loses all it holds.
    fields.insert(QLatin1String("arguments"),
                  redactSecrets(ArgumentCondenser().object(call.arguments)));
    return fields;
}

QJsonObject callFinishedFields(const ToolCallRecord &call, const ToolResult *result, qint64 at)
{
    QJsonObject fields = callFields(call, "call_finished", at);
    fields.insert(QLatin1String("outcome"), toolCallOutcomeName(call.outcome));
    fields.insert(QLatin1String("durationMs"), double(call.durationMs));
    if (!call.detail.isEmpty())
        fields.insert(QLatin1String("detail"), call.detail.left(MaxErrorMessageLength));
    if (result)
        fields.insert(QLatin1String("result"), resultSummary(*result));
    return fields;
}

} // namespace cmcp::audit::reference
