#include "mcp/McpServer.h"

#include "mcp/RunningCall.h"

#include <QPointer>

namespace cmcp {

ToolCallRecord McpServer::startCallRecord(const Request &request, const QString &tool,
                                          const QJsonObject &arguments)
{
    ToolCallRecord call;
    call.callId = ++m_lastCallId;
    call.sessionId = request.session->id();
    call.transport = request.session->transportName();
    call.clientName = request.session->clientInfo().value(QLatin1String("name")).toString();
    call.tool = tool;
    call.taskId = request.session->taskId();
    call.arguments = arguments;
    call.startedAt = QDateTime::currentDateTimeUtc();
    Q_EMIT toolCallStarted(call);
    return call;
}

void McpServer::endCallRecord(ToolCallRecord &call, ToolCallOutcome outcome,
                              const ToolResult *result, const QString &detail)
{
    call.outcome = outcome;
    call.detail = detail;
    call.durationMs = call.startedAt.msecsTo(QDateTime::currentDateTimeUtc());
    m_running.erase(call.callId);
    Q_EMIT toolCallFinished(call, result);
}

void McpServer::afterRecordsDurable(std::function<void()> then)
{
    if (!m_durabilityWait) {
        then();
        return;
    }
    ++m_answersAwaitingRecords;
    m_durabilityWait([server = QPointer<McpServer>(this), then = std::move(then)] {
        if (server)
            --server->m_answersAwaitingRecords;
        then();
    });
}

QList<ToolCallRecord> McpServer::callsInFlight() const
{
    QList<ToolCallRecord> calls;
    for (const auto &[callId, running] : m_running)
        calls.append(running->record());
    return calls;
}

bool McpServer::cancelCall(quint64 callId, const QString &reason)
{
    const auto it = m_running.find(callId);
    if (it == m_running.end())
        return false;
    // Held here: cancelling ends the record, which takes the call out of m_running.
    const std::shared_ptr<RunningCall> running = it->second;
    if (!running->cancel(reason)) {
        m_running.erase(it);
        return false;
    }
    return true;
}

QString toolCallOutcomeName(ToolCallOutcome outcome)
{
    switch (outcome) {
    case ToolCallOutcome::Succeeded:
        return QStringLiteral("succeeded");
    case ToolCallOutcome::Failed:
        return QStringLiteral("failed");
    case ToolCallOutcome::InvalidArguments:
        return QStringLiteral("invalid_arguments");
    case ToolCallOutcome::UnknownTool:
        return QStringLiteral("unknown_tool");
    case ToolCallOutcome::BrokeOutputSchema:
        return QStringLiteral("broke_output_schema");
    case ToolCallOutcome::Cancelled:
        return QStringLiteral("cancelled");
    case ToolCallOutcome::InputRequired:
        return QStringLiteral("input_required");
    }
    return QStringLiteral("unknown");
}

} // namespace cmcp
