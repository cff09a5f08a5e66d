#include "ToolResult.h"

#include <QJsonDocument>

namespace cmcp {

namespace {
QJsonObject textBlock(const QString &text)
{
    return QJsonObject{{QLatin1String("type"), QLatin1String("text")}, {QLatin1String("text"), text}};
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
    ToolResult result;
    result.content.append(textBlock(QString::fromUtf8(QJsonDocument(value).toJson(QJsonDocument::Compact))));
    result.structuredContent = value;
    result.isError = isError;
    return result;
}

} // namespace cmcp
