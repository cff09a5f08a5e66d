#include "console/ConsoleSession.h"

#include "console/CallModel.h"
#include "console/SessionModel.h"
#include "console/WorkspaceModel.h"
#include "common/AdminWorkspaceRecords.h"

namespace cmcp {

namespace {

QString errorText(const QString &code, const QString &message)
{
    return message.isEmpty() ? code : message;
}

} // namespace

ConsoleSession::ConsoleSession(AdminClient &client, QObject *parent)
    : QObject(parent),
      m_client(client),
      m_calls(new CallModel(this)),
      m_sessions(new SessionModel(this)),
      m_workspaces(new WorkspaceModel(this))
{
    connect(&client, &AdminClient::connected, this, [this] {
        m_client.request(QLatin1String(admin::SubscribeLogParams::method),
                         admin::SubscribeLogParams{QStringLiteral("info")}.toJson());
        refresh();
    });
    connect(&client, &AdminClient::eventReceived, this, &ConsoleSession::onEvent);

    on<admin::CallStartedEvent>([this](const admin::CallStartedEvent &started) {
        m_calls->enqueue(started.call);
        m_sessions->callStarted(started.call.sessionId, started.call.clientName);
    });
    on<admin::CallFinishedEvent>(
            [this](const admin::CallFinishedEvent &finished) { m_calls->enqueue(finished.call); });
    on<admin::ProgressRecord>(
            [this](const admin::ProgressRecord &progress) { m_calls->enqueueProgress(progress); });
    on<admin::SessionOpenedEvent>(
            [this](const admin::SessionOpenedEvent &opened) { m_sessions->opened(opened); });
    on<admin::SessionClosedEvent>([this](const admin::SessionClosedEvent &closed) {
        m_sessions->closed(closed.sessionId);
    });
    on<admin::CountersRecord>([this](const admin::CountersRecord &counters) {
        m_counters = counters;
        Q_EMIT countersChanged();
    });
    on<admin::SettingChangedEvent>(
            [this](const admin::SettingChangedEvent &changed) { updateSetting(changed.setting); });
    on<admin::LogLineEvent>([this](const admin::LogLineEvent &line) { Q_EMIT logLine(line); });
    on<admin::DroppedEvent>([this](const admin::DroppedEvent &dropped) {
        // We missed events: what we show may be stale, so start again from a snapshot.
        m_dropped += quint64(dropped.count);
        refresh();
    });
}

void ConsoleSession::refresh()
{
    refreshWorkspaces();
    m_client.request(QLatin1String(admin::methodSnapshot), {},
                     [this](const QJsonObject &result, const QString &code, const QString &) {
                         if (code.isEmpty())
                             applySnapshot(result);
                     });
}

void ConsoleSession::refreshWorkspaces(Done done)
{
    m_client.request(
            QLatin1String(admin::ListWorkspacesResult::method), {},
            [this, done](const QJsonObject &result, const QString &code, const QString &message) {
                if (code.isEmpty())
                    m_workspaces->reset(admin::ListWorkspacesResult::fromJson(result).workspaces);
                if (done)
                    done(code.isEmpty() ? QString() : errorText(code, message));
            });
}

void ConsoleSession::deleteWorkspace(const QString &workspaceId,
                                     std::function<void(const QString &, int)> done)
{
    m_client.request(
            QLatin1String(admin::DeleteWorkspaceParams::method),
            admin::DeleteWorkspaceParams{workspaceId}.toJson(),
            [this, done](const QJsonObject &result, const QString &code, const QString &message) {
                if (!code.isEmpty()) {
                    done(errorText(code, message), 0);
                    return;
                }
                done({}, admin::DeleteWorkspaceResult::fromJson(result).jobsKilled);
                refreshWorkspaces();
            });
}

void ConsoleSession::applySnapshot(const QJsonObject &result)
{
    const admin::SnapshotRecord snapshot = admin::SnapshotRecord::fromJson(result);
    m_calls->reset(snapshot.recentCalls + snapshot.calls);
    m_sessions->reset(snapshot.sessions);
    m_config = snapshot.config;
    m_sandbox = snapshot.sandbox;
    m_counters = snapshot.counters;
    Q_EMIT configChanged();
    Q_EMIT sandboxChanged();
    Q_EMIT countersChanged();
}

void ConsoleSession::onEvent(const QString &event, const QJsonObject &data)
{
    if (const auto handler = m_eventHandlers.constFind(event); handler != m_eventHandlers.cend())
        (*handler)(data);
}

void ConsoleSession::updateSetting(const admin::SettingRecord &setting)
{
    for (admin::SettingRecord &known : m_config) {
        if (known.name == setting.name) {
            known = setting;
            Q_EMIT configChanged();
            return;
        }
    }
}

void ConsoleSession::cancelCall(qint64 callId, Done done)
{
    m_client.request(QLatin1String(admin::CancelCallParams::method),
                     admin::CancelCallParams{callId}.toJson(),
                     [done](const QJsonObject &, const QString &code, const QString &message) {
                         if (done)
                             done(code.isEmpty() ? QString() : errorText(code, message));
                     });
}

void ConsoleSession::closeSession(const QString &sessionId, Done done)
{
    m_client.request(QLatin1String(admin::CloseSessionParams::method),
                     admin::CloseSessionParams{sessionId}.toJson(),
                     [done](const QJsonObject &, const QString &code, const QString &message) {
                         if (done)
                             done(code.isEmpty() ? QString() : errorText(code, message));
                     });
}

void ConsoleSession::setSetting(const QString &name, const QString &value,
                                std::function<void(const QString &, const QString &)> done)
{
    m_client.request(
            QLatin1String(admin::SetSettingParams::method),
            admin::SetSettingParams{name, value}.toJson(),
            [done](const QJsonObject &result, const QString &code, const QString &message) {
                if (!code.isEmpty()) {
                    done(errorText(code, message), {});
                    return;
                }
                const auto reply = admin::SetSettingResult::fromJson(result);
                QString note = reply.appliedLive ? tr("applied now and saved")
                                                 : tr("saved; applies after a restart");
                if (!reply.note.isEmpty())
                    note += QStringLiteral(" (%1)").arg(reply.note);
                done({}, note);
            });
}

} // namespace cmcp
