#include "mcp/ToolCall.h"

#include "mcp/JsonRpc.h"

#include <QTimer>

namespace cmcp {

ToolCall::ToolCall(const std::shared_ptr<Session> &session, const QString &requestKey,
                   const QString &toolName, const QJsonObject &arguments,
                   const QJsonValue &progressToken, Finisher finisher)
    : m_session(session),
      m_sessionId(session->id()),
      m_principal(session->principal()),
      m_requestKey(requestKey),
      m_toolName(toolName),
      m_arguments(arguments),
      m_progressToken(progressToken),
      m_finisher(std::move(finisher))
{
}

void ToolCall::reportProgress(double progress, std::optional<double> total, const QString &message)
{
    if (m_finished || m_cancelled || m_progressToken.isUndefined())
        return;
    if (m_lastProgress && progress <= *m_lastProgress)
        return;
    auto session = m_session.lock();
    if (!session)
        return;
    m_lastProgress = progress;
    QJsonObject params{{QLatin1String("progressToken"), m_progressToken},
                       {QLatin1String("progress"), progress}};
    if (total)
        params.insert(QLatin1String("total"), *total);
    if (!message.isEmpty())
        params.insert(QLatin1String("message"), message);
    session->sendRelated(
            m_requestKey,
            jsonrpc::makeNotification(QStringLiteral("notifications/progress"), params));
}

void ToolCall::reportOutput(qint64 bytes)
{
    if (m_finished || m_cancelled || bytes <= 0)
        return;
    m_outputBytes += bytes;
    Q_EMIT outputReported(m_outputBytes);
}

void ToolCall::log(LogLevel level, const QJsonValue &data, const QString &logger)
{
    if (m_finished || m_cancelled)
        return;
    auto session = m_session.lock();
    if (!session || !session->wantsLog(level))
        return;
    QJsonObject params{{QLatin1String("level"), logLevelName(level)},
                       {QLatin1String("data"), data}};
    if (!logger.isEmpty())
        params.insert(QLatin1String("logger"), logger);
    session->sendRelated(
            m_requestKey,
            jsonrpc::makeNotification(QStringLiteral("notifications/message"), params));
}

void ToolCall::requestFromClient(const QString &method, const QJsonObject &params,
                                 ClientReply reply, int timeoutMs, const QString &inputKey)
{
    auto session = m_session.lock();
    if (!session || m_cancelled || m_finished) {
        reply({}, QStringLiteral("the tool call is no longer running"));
        return;
    }
    session->requestFromClient(m_requestKey, method, params, std::move(reply), timeoutMs, inputKey);
    if (session->pendingInput().isEmpty() || !m_inputRequired || m_inputRequiredPending)
        return;
    // Questions asked together go out together: the call ends with its input_required result
    // once the events queued now (answers, further questions) have run.
    m_inputRequiredPending = true;
    QTimer::singleShot(0, this, [this] {
        const auto session = m_session.lock();
        if (!session || m_finished || m_cancelled)
            return;
        m_inputRequired(session->pendingInput());
        cancel(QStringLiteral("the call needs input from its client, and runs again when the "
                              "client retries it with the answers"));
    });
}

void ToolCall::closeStream()
{
    if (auto session = m_session.lock(); session && !m_finished && !m_cancelled)
        session->suspendRelated(m_requestKey);
}

void ToolCall::finish(const ToolResult &result)
{
    if (m_finished || m_cancelled)
        return;
    m_finished = true;
    if (m_finisher)
        m_finisher(result);
}

void ToolCall::cancel(const QString &reason)
{
    if (m_finished || m_cancelled)
        return;
    m_cancelled = true;
    Q_EMIT cancelled(reason);
}

} // namespace cmcp
