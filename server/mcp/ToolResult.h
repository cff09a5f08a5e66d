#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <optional>

namespace cmcp {

// What a tool hands back: content blocks for the model, optionally a structured value
// (checked against the tool's outputSchema), and whether the tool failed.
struct ToolResult
{
    QJsonArray content;
    std::optional<QJsonObject> structuredContent;
    bool isError = false;

    static ToolResult text(const QString &text);
    static ToolResult error(const QString &message);
    // The structured value, with its JSON text as the content block so that clients
    // without structured output (and older protocol revisions) see the same data.
    static ToolResult structured(const QJsonObject &value, bool isError = false);
};

} // namespace cmcp
