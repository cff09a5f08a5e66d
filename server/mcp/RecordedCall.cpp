#include "mcp/RecordedCall.h"

#include "mcp/McpServer.h"

namespace cmcp {

RecordedCall::RecordedCall(McpServer &server, ToolCallRecord record)
    : m_server(&server),
      m_record(std::move(record))
{
}

void RecordedCall::end(ToolCallOutcome outcome, const QString &detail, const ToolResult *result,
                       std::function<void()> answer)
{
    if (!m_server) {
        answer();
        return;
    }
    m_server->endCallRecord(m_record, outcome, result, detail);
    m_server->afterRecordsDurable(std::move(answer));
}

void RecordedCall::finish(ToolCallOutcome outcome, const ToolResult &result,
                          std::function<void(const QString &refusal)> answer)
{
    if (!m_server) {
        answer({});
        return;
    }
    m_server->endCallRecord(m_record, outcome, &result);
    // Asked now for a record that could not be written, and again once the records are synced
    // for one whose sync failed.
    const QString refusedAtWrite = m_server->failClosedReason();
    m_server->afterRecordsDurable([server = m_server, refusedAtWrite, answer = std::move(answer)] {
        QString refusal = refusedAtWrite;
        if (refusal.isEmpty() && server)
            refusal = server->failClosedReason();
        answer(refusal);
    });
}

void RecordedCall::endUnanswered(ToolCallOutcome outcome, const QString &detail)
{
    if (m_server)
        m_server->endCallRecord(m_record, outcome, nullptr, detail);
}

} // namespace cmcp
