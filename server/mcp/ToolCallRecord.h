#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QString>

namespace cmcp {

struct ToolResult;

// How a tools/call ended, as observers (the admin channel, the audit log) see it.
enum class ToolCallOutcome {
    Succeeded, // the tool returned a result without isError
    Failed, // the tool returned isError (a refusal, a failed command, ...)
    InvalidArguments, // the arguments broke the input schema; the tool never ran
    UnknownTool, // no such tool; nothing ran
    BrokeOutputSchema, // the tool's structuredContent broke its outputSchema (a server bug)
    Cancelled, // the client cancelled, or its session ended, before the result
    InputRequired, // the call needs answers from its client, who retries it with them
};

QString toolCallOutcomeName(ToolCallOutcome outcome);

// One tools/call as the server saw it. `arguments` are the client's, unredacted: observers that
// store or show them redact secrets themselves.
struct ToolCallRecord
{
    quint64 callId = 0; // unique within this daemon's run, increasing
    QString sessionId;
    QString transport;
    QString clientName;
    QString tool;
    QString taskId; // the task the call runs for (Tasks extension), if any
    QJsonObject arguments;
    QDateTime startedAt;
    // Set when the call has ended.
    ToolCallOutcome outcome = ToolCallOutcome::Succeeded;
    qint64 durationMs = 0;
    QString detail; // the reason for the outcomes that have one (cancellation, schema violation)
};

} // namespace cmcp
