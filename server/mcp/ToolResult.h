#pragma once

#include "mcp/JsonWriter.h"

#include <QByteArray>
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
    // Set by structured(): structuredContent as compact UTF-8 JSON, serialized once. The response
    // splices these bytes in as they are, and its first content block is a text block holding
    // them, which `content` leaves out so that large results are not built twice.
    QByteArray structuredJson;
    bool isError = false;

    static ToolResult text(const QString &text);
    static ToolResult error(const QString &message);
    // The structured value, with its JSON text as the content block so that clients
    // without structured output (and older protocol revisions) see the same data.
    static ToolResult structured(const QJsonObject &value, bool isError = false);
    // {"success": false, "error": message} as a structured error: how the tools that answer
    // with a structured value report a failure.
    static ToolResult structuredFailure(const QString &message);
    // The same, with the string fields named in `utf8Fields` serialized from these bytes (valid
    // UTF-8): a tool holding large text as UTF-8 never has it converted to UTF-16 and back.
    // `value` must hold the same text in those fields, for the outputSchema check.
    static ToolResult structured(const QJsonObject &value, const json::Utf8Fields &utf8Fields,
                                 bool isError = false);

    // Every content block, the text block of structuredJson included.
    QJsonArray contentBlocks() const;
};

} // namespace cmcp
