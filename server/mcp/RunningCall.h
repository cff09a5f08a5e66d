#pragma once

#include "mcp/RecordedCall.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <memory>
#include <optional>

namespace cmcp {

class Session;
struct ToolResult;

// One tools/call from the moment its tool starts until the client has the answer: what that
// answer needs (the session, the request, the protocol version, the tool's output schema) and
// the call's record, which the first of the tool's result and a cancellation ends. Shared by
// the call's finisher, the session's cancel handler and the server's calls in flight, so it is
// safe to use after the session or the server has gone.
class RunningCall
{
public:
    RunningCall(RecordedCall recorded, const std::shared_ptr<Session> &session, QString requestKey,
                quint64 serial, QJsonValue requestId, QString protocolVersion,
                std::optional<QJsonObject> outputSchema);

    const ToolCallRecord &record() const { return m_recorded.record(); }

    // The tool's result: checked against the output schema, recorded, then, once the record is
    // durable, sent in the shape the session's protocol version knows. Nothing happens when the
    // session has gone.
    void finish(const ToolResult &result);

    // The call asked its client questions no answer met: recorded so, then answered with an
    // input_required result of `inputRequests` and `requestState`.
    void finishInputRequired(const QJsonObject &inputRequests, const QString &requestState);

    // The client cancelled, or its session ended, before the result: the record ends so.
    void endCancelled(const QString &reason);

    // Cancels the call as its client could, but answers the client with an error naming
    // `reason`. False, and nothing done, when the session has gone or was already answered.
    bool cancel(const QString &reason);

private:
    void answer(Session &session, const ToolResult &result) const;

    RecordedCall m_recorded;
    std::weak_ptr<Session> m_session;
    const QString m_requestKey;
    const quint64 m_serial;
    const QJsonValue m_requestId;
    const QString m_protocolVersion;
    const std::optional<QJsonObject> m_outputSchema;
};

} // namespace cmcp
