#pragma once

#include "console/AdminClient.h"
#include "common/AdminLogRecords.h"
#include "common/AdminSettingRecords.h"
#include "common/AdminSnapshotRecords.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>

#include <functional>

namespace cmcp {

class CallModel;
class SessionModel;
class WorkspaceModel;

// What the console knows of the daemon (the Session of Transmission's Qt client): it feeds the
// models from the client's snapshot and events, asks for a fresh snapshot after every
// (re)connection and after events were dropped, and offers the daemon's requests as calls.
class ConsoleSession : public QObject
{
    Q_OBJECT
public:
    using Done = std::function<void(const QString &error)>; // "" on success

    explicit ConsoleSession(AdminClient &client, QObject *parent = nullptr);

    AdminClient &client() { return m_client; }
    CallModel &calls() { return *m_calls; }
    SessionModel &sessions() { return *m_sessions; }
    WorkspaceModel &workspaces() { return *m_workspaces; }
    const QList<admin::SettingRecord> &config() const { return m_config; }
    const admin::SandboxReport &sandbox() const { return m_sandbox; }
    const admin::CountersRecord &counters() const { return m_counters; }
    quint64 droppedEvents() const { return m_dropped; }

    void cancelCall(qint64 callId, Done done);
    void closeSession(const QString &sessionId, Done done);
    // On success `note` says whether it applied now or after a restart.
    void setSetting(const QString &name, const QString &value,
                    std::function<void(const QString &error, const QString &note)> done);
    void refresh();
    // Asks the daemon for its workspaces again (listWorkspaces); done gets "" or why not.
    void refreshWorkspaces(Done done = {});
    // Deletes a named workspace, its jobs killed first; on success `jobsKilled` says how many.
    void deleteWorkspace(const QString &workspaceId,
                         std::function<void(const QString &error, int jobsKilled)> done);
    // Replaces what the models show with a snapshot reply's result.
    void applySnapshot(const QJsonObject &snapshot);

Q_SIGNALS:
    void configChanged();
    void sandboxChanged();
    void countersChanged();
    void logLine(const cmcp::admin::LogLineEvent &line);

private:
    // Handles the events of one record type (one with a static `event` name).
    template<typename Event>
    void on(std::function<void(const Event &)> handler)
    {
        m_eventHandlers.insert(QLatin1String(Event::event),
                               [handler = std::move(handler)](const QJsonObject &data) {
                                   handler(Event::fromJson(data));
                               });
    }
    void onEvent(const QString &event, const QJsonObject &data);
    void updateSetting(const admin::SettingRecord &setting);

    AdminClient &m_client;
    CallModel *m_calls;
    SessionModel *m_sessions;
    WorkspaceModel *m_workspaces;
    QList<admin::SettingRecord> m_config;
    admin::SandboxReport m_sandbox;
    admin::CountersRecord m_counters;
    quint64 m_dropped = 0;
    // Event names and their handlers; events of other names are ignored.
    QHash<QString, std::function<void(const QJsonObject &data)>> m_eventHandlers;
};

} // namespace cmcp
