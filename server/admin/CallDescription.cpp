#include "admin/CallDescription.h"

#include "base/SecretRedaction.h"
#include "mcp/ToolResult.h"

#include <QJsonArray>

namespace cmcp {

namespace {

constexpr qsizetype outputEdge = 1024; // characters of the output's head and of its tail
constexpr qsizetype longString = 240; // strings of the structured value beyond this are cut
// Argument strings beyond this are cut: the server keeps the last calls' descriptions for new
// consoles, and whole arguments (a file_write's content, up to FILE_MAX_SIZE_MB) kept that way
// held hundreds of megabytes (measured: VmRSS +12 MB for every twelve 512 KB writes).
constexpr qsizetype longArgument = 4096;

QJsonValue cutLongStrings(const QJsonValue &value, qsizetype limit)
{
    if (value.isString()) {
        const QString text = value.toString();
        if (text.size() <= limit)
            return text;
        return text.left(limit) + QStringLiteral("… (%1 characters)").arg(text.size());
    }
    if (value.isArray()) {
        QJsonArray items;
        for (const QJsonValue &item : value.toArray())
            items.append(cutLongStrings(item, limit));
        return items;
    }
    if (value.isObject()) {
        QJsonObject object;
        const QJsonObject source = value.toObject();
        for (auto it = source.begin(); it != source.end(); ++it)
            object.insert(it.key(), cutLongStrings(it.value(), limit));
        return object;
    }
    return value;
}

QString resultText(const ToolResult &result)
{
    QString text;
    for (const QJsonValue &block : result.contentBlocks()) {
        const QJsonObject object = block.toObject();
        if (object.value(QLatin1String("type")).toString() == u"text") {
            if (!text.isEmpty())
                text += u'\n';
            text += object.value(QLatin1String("text")).toString();
        }
    }
    return text;
}

} // namespace

admin::CallRecord describeCall(const ToolCallRecord &call, bool finished, const ToolResult *result)
{
    admin::CallRecord described;
    described.callId = qint64(call.callId);
    described.sessionId = call.sessionId;
    described.transport = call.transport;
    described.clientName = call.clientName;
    described.tool = call.tool;
    // Redacted before the cut, so that a cut never hides a secret's name.
    described.arguments =
            cutLongStrings(admin::redactSecrets(call.arguments), longArgument).toObject();
    described.startedAt = call.startedAt;
    described.status = finished ? toolCallOutcomeName(call.outcome)
                                : QLatin1String(admin::CallRecord::running);
    if (!finished)
        return described;
    described.durationMs = call.durationMs;
    described.detail = call.detail;
    if (result) {
        // A structured result's text block is its JSON: the accounting shows it, cut.
        if (result->structuredContent) {
            described.accounting =
                    cutLongStrings(*result->structuredContent, longString).toObject();
        } else {
            const QString text = resultText(*result);
            described.outputHead = text.left(outputEdge);
            if (text.size() > outputEdge)
                described.outputTail = text.right(std::min(outputEdge, text.size() - outputEdge));
        }
    }
    return described;
}

} // namespace cmcp
