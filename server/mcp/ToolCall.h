#pragma once

#include "mcp/LogLevel.h"
#include "mcp/Session.h"
#include "mcp/ToolResult.h"

#include <QJsonObject>
#include <QObject>

#include <functional>
#include <memory>
#include <optional>

namespace cmcp {

// One running tools/call: what a tool handler receives. Through it the handler reports
// progress, logs to the client, asks the client (sampling, elicitation), learns of
// cancellation, and finishes exactly once. Safe to use after the session has gone.
class ToolCall : public QObject
{
    Q_OBJECT
public:
    using Finisher = std::function<void(const ToolResult &)>;

    ToolCall(const std::shared_ptr<Session> &session, const QString &requestKey,
             const QString &toolName, const QJsonObject &arguments, const QJsonValue &progressToken,
             Finisher finisher);

    const QString &toolName() const { return m_toolName; }
    const QJsonObject &arguments() const { return m_arguments; }
    const QString &sessionId() const { return m_sessionId; }
    // Who made the call: its session's principal, kept after the session has gone.
    const Principal &principal() const { return m_principal; }
    bool isCancelled() const { return m_cancelled; }
    bool isFinished() const { return m_finished; }

    // Sent only when the client asked for progress; values that do not increase are dropped,
    // as the specification requires progress to increase.
    void reportProgress(double progress, std::optional<double> total = std::nullopt,
                        const QString &message = {});
    // Output the call's work has written so far (a job's stdout and stderr), for observers such
    // as the admin channel, whether or not the client asked for progress.
    void reportOutput(qint64 bytes);
    void log(LogLevel level, const QJsonValue &data, const QString &logger = {});
    // Asks the client (Session::requestFromClient). `inputKey` names the question in the modern
    // era's input_required result (made up when empty): a call that asks there is run again
    // from the start when its client retries with the answers, and asks the same questions
    // under the same keys, now answered at once.
    void requestFromClient(const QString &method, const QJsonObject &params, ClientReply reply,
                           int timeoutMs = 60000, const QString &inputKey = {});
    // For the core: what ends the call when it has asked questions no answer met (once the
    // questions asked at once are all in). The call counts as cancelled afterwards.
    void setInputRequiredHandler(std::function<void(const QJsonObject &inputRequests)> handler)
    {
        m_inputRequired = std::move(handler);
    }

    // Ends the HTTP stream carrying this call so that the client reconnects later and gets
    // the rest, the result included (SEP-1699); long calls use it to outlive client timeouts.
    void closeStream();

    // Later calls, and calls after cancellation, are ignored.
    void finish(const ToolResult &result);

    // Called by the core when the client cancels or the session ends.
    void cancel(const QString &reason);

Q_SIGNALS:
    void cancelled(const QString &reason);
    void outputReported(qint64 totalBytes);

private:
    std::weak_ptr<Session> m_session;
    const QString m_sessionId;
    const Principal m_principal;
    const QString m_requestKey;
    const QString m_toolName;
    const QJsonObject m_arguments;
    const QJsonValue m_progressToken;
    Finisher m_finisher;
    std::function<void(const QJsonObject &inputRequests)> m_inputRequired;
    bool m_inputRequiredPending = false;
    std::optional<double> m_lastProgress;
    qint64 m_outputBytes = 0;
    bool m_cancelled = false;
    bool m_finished = false;
};

} // namespace cmcp
