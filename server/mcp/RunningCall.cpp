#include "mcp/RunningCall.h"

#include "mcp/JsonRpc.h"
#include "mcp/JsonWriter.h"
#include "mcp/ProtocolVersion.h"
#include "mcp/SchemaValidator.h"
#include "mcp/Session.h"
#include "mcp/ToolResult.h"

#include <QJsonArray>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

// Content types a protocol revision knows; newer kinds are left out for older clients.
bool contentAllowed(const QJsonObject &block, const QString &version)
{
    const QString type = block.value(QLatin1String("type")).toString();
    if (type == QLatin1String("audio"))
        return protocol::atLeast(version, protocol::V2025_03_26);
    if (type == QLatin1String("resource_link"))
        return protocol::atLeast(version, protocol::V2025_06_18);
    return true;
}

// The response to a tools/call whose result carries its structured value serialized: written
// as bytes, so that the value is serialized once and its text is never parsed back or converted
// to UTF-16. The same keys in the same order as jsonrpc::makeResult would give.
QByteArray serializedResult(const QJsonValue &id, const ToolResult &toolResult,
                            const QString &version)
{
    const QByteArray &structured = toolResult.structuredJson;
    const bool withStructured = protocol::hasStructuredOutput(version);
    QByteArray out;
    out.reserve(structured.size() * (withStructured ? 2 : 1) + structured.size() / 8 + 256);
    out += "{\"id\":";
    json::appendValue(out, id);
    out += ",\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"text\":";
    json::appendString(out, structured);
    out += ",\"type\":\"text\"}";
    for (const QJsonValue &block : toolResult.content) {
        if (contentAllowed(block.toObject(), version)) {
            out += ',';
            json::appendValue(out, block);
        }
    }
    out += ']';
    if (toolResult.isError)
        out += ",\"isError\":true";
    if (protocol::isModern(version))
        out += ",\"resultType\":\"complete\"";
    if (withStructured) {
        out += ",\"structuredContent\":";
        out += structured;
    }
    out += "}}";
    return out;
}

} // namespace

RunningCall::RunningCall(RecordedCall recorded, const std::shared_ptr<Session> &session,
                         QString requestKey, quint64 serial, QJsonValue requestId,
                         QString protocolVersion, std::optional<QJsonObject> outputSchema)
    : m_recorded(std::move(recorded)),
      m_session(session),
      m_requestKey(std::move(requestKey)),
      m_serial(serial),
      m_requestId(std::move(requestId)),
      m_protocolVersion(std::move(protocolVersion)),
      m_outputSchema(std::move(outputSchema))
{
}

void RunningCall::finish(const ToolResult &toolResult)
{
    const std::shared_ptr<Session> session = m_session.lock();
    if (!session)
        return;
    const QString &name = m_recorded.record().tool;
    if (m_outputSchema && !toolResult.isError) {
        const QString problem = toolResult.structuredContent
                ? SchemaValidator::validate(*m_outputSchema, *toolResult.structuredContent,
                                            QStringLiteral("structuredContent"))
                : QStringLiteral("structuredContent is missing");
        if (!problem.isEmpty()) {
            spdlog::error("tool {} broke its outputSchema: {}", name.toStdString(),
                          problem.toStdString());
            const QJsonObject response = jsonrpc::makeError(
                    m_requestId, jsonrpc::InternalError,
                    QStringLiteral("tool %1 produced output that does not match its "
                                   "outputSchema: %2")
                            .arg(name, problem));
            m_recorded.end(ToolCallOutcome::BrokeOutputSchema, problem, &toolResult,
                           [session, key = m_requestKey, serial = m_serial, response] {
                               session->settleRequest(key, serial, response);
                           });
            return;
        }
    }
    m_recorded.finish(
            toolResult.isError ? ToolCallOutcome::Failed : ToolCallOutcome::Succeeded, toolResult,
            [call = *this, session, toolResult](const QString &refusal) {
                if (!refusal.isEmpty()) {
                    const QJsonObject refused{
                            {QLatin1String("content"), ToolResult::error(refusal).content},
                            {QLatin1String("isError"), true}};
                    session->settleRequest(call.m_requestKey, call.m_serial,
                                           jsonrpc::makeResult(call.m_requestId, refused));
                    return;
                }
                call.answer(*session, toolResult);
            });
}

// Sends the result in the shape the session's protocol version knows.
void RunningCall::answer(Session &session, const ToolResult &toolResult) const
{
    if (!toolResult.structuredJson.isEmpty()) {
        session.settleRequest(m_requestKey, m_serial,
                              serializedResult(m_requestId, toolResult, m_protocolVersion));
        return;
    }
    QJsonArray content;
    for (const QJsonValue &block : toolResult.content) {
        if (contentAllowed(block.toObject(), m_protocolVersion))
            content.append(block);
    }
    QJsonObject result{{QLatin1String("content"), content}};
    if (toolResult.structuredContent && protocol::hasStructuredOutput(m_protocolVersion))
        result.insert(QLatin1String("structuredContent"), *toolResult.structuredContent);
    if (toolResult.isError)
        result.insert(QLatin1String("isError"), true);
    session.settleRequest(m_requestKey, m_serial, jsonrpc::makeResult(m_requestId, result));
}

void RunningCall::finishInputRequired(const QJsonObject &inputRequests, const QString &requestState)
{
    const std::shared_ptr<Session> session = m_session.lock();
    if (!session)
        return;
    const QJsonObject response = jsonrpc::makeResult(
            m_requestId,
            QJsonObject{{QLatin1String("resultType"), QLatin1String("input_required")},
                        {QLatin1String("inputRequests"), inputRequests},
                        {QLatin1String("requestState"), requestState}});
    m_recorded.end(ToolCallOutcome::InputRequired,
                   QStringLiteral("asked its client for %1")
                           .arg(inputRequests.keys().join(QLatin1String(", "))),
                   nullptr, [session, key = m_requestKey, serial = m_serial, response] {
                       session->settleRequest(key, serial, response);
                   });
}

void RunningCall::endCancelled(const QString &reason)
{
    m_recorded.endUnanswered(ToolCallOutcome::Cancelled, reason);
}

bool RunningCall::cancel(const QString &reason)
{
    const std::shared_ptr<Session> session = m_session.lock();
    if (!session || !session->isRequestInFlight(m_requestKey))
        return false;
    session->cancelRequest(
            m_requestKey, reason,
            jsonrpc::makeError(m_requestId, jsonrpc::RequestFailed,
                               QStringLiteral("the call was cancelled: %1").arg(reason)));
    return true;
}

} // namespace cmcp
