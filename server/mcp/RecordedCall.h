#pragma once

#include "mcp/ToolCallRecord.h"

#include <QPointer>
#include <QString>

#include <functional>

namespace cmcp {

class McpServer;
struct ToolResult;

// The record of one tools/call, started when the call is, and the one way to end it: every end
// (a refusal, the tool's result, questions for the client, a cancellation) ends the record and
// sends the answer only once the records are durable (McpServer::setRecordDurabilityWait), in
// one step, so that no branch can record without answering or answer before the record is
// durable. Safe to use after the server has gone: the answer is then sent at once.
class RecordedCall
{
public:
    RecordedCall(McpServer &server, ToolCallRecord record);

    const ToolCallRecord &record() const { return m_record; }

    // Ends the record with `outcome` (`result` null when no tool result exists), then runs
    // `answer`, which replies to the client, once the record is durable.
    void end(ToolCallOutcome outcome, const QString &detail, const ToolResult *result,
             std::function<void()> answer);

    // Ends the record with the tool's `result`, then runs `answer` once the record is durable,
    // with the reason the call fails closed instead (the fail-closed check, asked right after
    // the record is written and again once it is durable), or an empty one.
    void finish(ToolCallOutcome outcome, const ToolResult &result,
                std::function<void(const QString &refusal)> answer);

    // Ends the record without an answer of its own: the cancellation's response is the
    // session's.
    void endUnanswered(ToolCallOutcome outcome, const QString &detail);

private:
    QPointer<McpServer> m_server;
    ToolCallRecord m_record;
};

} // namespace cmcp
