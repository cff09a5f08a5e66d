#include "audit/AuditRecord.h"

#include "audit/AuditChain.h"
#include "common/SecretRedaction.h"
#include "mcp/ToolResult.h"

#include <QJsonArray>

namespace cmcp::audit {

namespace {

QJsonValue condense(const QJsonValue &value);

QJsonObject condenseObject(const QJsonObject &object)
{
    QJsonObject out;
    for (auto it = object.begin(); it != object.end(); ++it)
        out.insert(it.key(), condense(it.value()));
    return out;
}

// Long strings (a file_write's content) are cut to their start, with their length and sha256 so
// that the record still identifies the exact value.
QJsonValue condense(const QJsonValue &value)
{
    if (value.isObject())
        return condenseObject(value.toObject());
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue &item : value.toArray())
            out.append(condense(item));
        return out;
    }
    if (!value.isString() || value.toString().size() <= MaxArgumentStringLength)
        return value;
    const QString text = value.toString();
    const QByteArray utf8 = text.toUtf8();
    return QStringLiteral("%1… [%2 bytes in all, sha256 %3]")
            .arg(text.left(MaxArgumentStringLength))
            .arg(utf8.size())
            .arg(QString::fromLatin1(sha256Hex(utf8)));
}

QJsonObject callFields(const ToolCallRecord &call, const char *event)
{
    QJsonObject fields{
            {QLatin1String("event"), QLatin1String(event)},
            {QLatin1String("time"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
            {QLatin1String("call"), double(call.callId)},
            {QLatin1String("session"), call.sessionId},
            {QLatin1String("transport"), call.transport},
            {QLatin1String("client"), call.clientName},
            {QLatin1String("tool"), call.tool},
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
        if (!value.isUndefined())
            out.insert(QLatin1String(field), value);
    }
    return out;
}

QJsonObject resultSummary(const ToolResult &result)
{
    const QJsonArray blocks = result.contentBlocks();
    qint64 textBytes = result.structuredJson.size();
    for (const QJsonValue &block : result.content)
        textBytes += block.toObject().value(QLatin1String("text")).toString().toUtf8().size();
    QJsonObject summary{{QLatin1String("isError"), result.isError},
                        {QLatin1String("contentBlocks"), double(blocks.size())},
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

QJsonObject callStartedFields(const ToolCallRecord &call)
{
    QJsonObject fields = callFields(call, "call_started");
    // Secrets are redacted before long values are cut, so that a cut never hides a secret's name.
    fields.insert(QLatin1String("arguments"), condenseObject(redactSecrets(call.arguments)));
    return fields;
}

QJsonObject callFinishedFields(const ToolCallRecord &call, const ToolResult *result)
{
    QJsonObject fields = callFields(call, "call_finished");
    fields.insert(QLatin1String("outcome"), toolCallOutcomeName(call.outcome));
    fields.insert(QLatin1String("durationMs"), double(call.durationMs));
    if (!call.detail.isEmpty())
        fields.insert(QLatin1String("detail"), call.detail.left(MaxErrorMessageLength));
    if (result)
        fields.insert(QLatin1String("result"), resultSummary(*result));
    return fields;
}

} // namespace cmcp::audit
