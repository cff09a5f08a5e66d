#include "mcp/ToolResult.h"

namespace cmcp {

namespace {
QJsonObject textBlock(const QString &text)
{
    return QJsonObject{{QLatin1String("type"), QLatin1String("text")},
                       {QLatin1String("text"), text}};
}
} // namespace

ToolResult ToolResult::text(const QString &text)
{
    ToolResult result;
    result.content.append(textBlock(text));
    return result;
}

ToolResult ToolResult::error(const QString &message)
{
    ToolResult result = text(message);
    result.isError = true;
    return result;
}

ToolResult ToolResult::structured(const QJsonObject &value, bool isError)
{
    return structured(value, {}, isError);
}

ToolResult ToolResult::structuredFailure(const QString &message)
{
    return structured(
            QJsonObject{{QLatin1String("success"), false}, {QLatin1String("error"), message}},
            true);
}

ToolResult ToolResult::structured(const QJsonObject &value, const json::Utf8Fields &utf8Fields,
                                  bool isError)
{
    ToolResult result;
    result.structuredJson = json::serialize(value, utf8Fields);
    result.structuredContent = value;
    result.isError = isError;
    return result;
}

QJsonArray ToolResult::contentBlocks() const
{
    if (structuredJson.isEmpty())
        return content;
    QJsonArray blocks{textBlock(QString::fromUtf8(structuredJson))};
    for (const QJsonValue &block : content)
        blocks.append(block);
    return blocks;
}

} // namespace cmcp
