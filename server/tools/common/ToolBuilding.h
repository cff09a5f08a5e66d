// What every tool family (file, system, ...) builds its tools from: schemas written as JSON
// text, the failure shape all output schemas admit, and one ToolDefinition constructor.
#pragma once

#include "mcp/ToolRegistry.h"

#include <QJsonObject>

namespace cmcp::tools {

// A schema written as JSON text in the source; the text is the programmer's, so a typo is a
// bug caught by the first test that lists the tools (asserted in debug builds).
QJsonObject schema(const char *jsonText);

// Failures (bad arguments, refusals) carry {success: false, error} as structured content too,
// so an output schema admits that shape beside the tool's own `success` shape. Clients check
// structuredContent against the output schema even when isError is set.
QJsonObject orFailure(const QJsonObject &success);

// The output schema of a tool whose success is {success: true, <properties>} (JSON text of the
// properties, and of the array of required names), or the failure shape.
QJsonObject successOutput(const QByteArray &properties, const char *required);
// `value` with success: true.
QJsonObject succeeded(QJsonObject value);

// `input` with the optional argument `workspace`: the name (or id) of one of the caller's named
// workspaces to work in instead of the session's (SessionWorkspaces::forCall).
QJsonObject withWorkspaceArgument(QJsonObject input);

ToolDefinition makeTool(const char *name, const char *title, const char *description,
                        QJsonObject input, QJsonObject output, ToolAnnotations annotations,
                        ToolHandler handler, TaskSupport taskSupport = TaskSupport::Forbidden);

} // namespace cmcp::tools
