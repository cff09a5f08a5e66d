#pragma once

#include "AdminClient.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>

namespace cmcp {

class CallModel;
class SessionModel;

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
    const QJsonArray &config() const { return m_config; }
    const QJsonObject &sandbox() const { return m_sandbox; }
    const QJsonObject &counters() const { return m_counters; }
    quint64 droppedEvents() const { return m_dropped; }

    void cancelCall(qint64 callId, Done done);
    void closeSession(const QString &sessionId, Done done);
    // On success `note` says whether it applied now or after a restart.
    void setSetting(const QString &name, const QString &value,
                    std::function<void(const QString &error, const QString &note)> done);
    void refresh();
    // Replaces what the models show with a snapshot reply.
    void applySnapshot(const QJsonObject &snapshot);

Q_SIGNALS:
    void configChanged();
    void sandboxChanged();
    void countersChanged();
    void logLine(const QJsonObject &line);

private:
    void onEvent(const QString &event, const QJsonObject &data);
    void updateSetting(const QJsonObject &setting);

    AdminClient &m_client;
    CallModel *m_calls;
    SessionModel *m_sessions;
    QJsonArray m_config;
    QJsonObject m_sandbox;
    QJsonObject m_counters;
    quint64 m_dropped = 0;
};

} // namespace cmcp
