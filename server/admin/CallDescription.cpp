#include "CallDescription.h"

#include "SecretRedaction.h"
#include "ToolResult.h"

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

QJsonObject describeCall(const ToolCallRecord &call, bool finished, const ToolResult *result)
{
    QJsonObject object{
            {QLatin1String("callId"), double(call.callId)},
            {QLatin1String("sessionId"), call.sessionId},
            {QLatin1String("transport"), call.transport},
            {QLatin1String("clientName"), call.clientName},
            {QLatin1String("tool"), call.tool},
            // Redacted before the cut, so that a cut never hides a secret's name.
            {QLatin1String("arguments"),
             cutLongStrings(admin::redactSecrets(call.arguments), longArgument)},
            {QLatin1String("startedAt"), call.startedAt.toString(Qt::ISODateWithMs)},
            {QLatin1String("status"),
             finished ? toolCallOutcomeName(call.outcome) : QStringLiteral("running")},
    };
    if (!finished)
        return object;
    object.insert(QLatin1String("durationMs"), double(call.durationMs));
    if (!call.detail.isEmpty())
        object.insert(QLatin1String("detail"), call.detail);
    if (result) {
        // A structured result's text block is its JSON: the accounting shows it, cut.
        if (result->structuredContent) {
            object.insert(QLatin1String("accounting"),
                          cutLongStrings(*result->structuredContent, longString));
        } else {
            const QString text = resultText(*result);
            object.insert(QLatin1String("outputHead"), text.left(outputEdge));
            if (text.size() > outputEdge)
                object.insert(QLatin1String("outputTail"),
                              text.right(std::min(outputEdge, text.size() - outputEdge)));
        }
    }
    return object;
}

} // namespace cmcp
