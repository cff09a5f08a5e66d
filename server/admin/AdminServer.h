#pragma once

#include "common/AdminCallRecords.h"
#include "common/AdminProtocol.h"
#include "common/AdminSnapshotRecords.h"
#include "mcp/ToolCallRecord.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QTimer>

#include <deque>
#include <memory>
#include <optional>
#include <sys/types.h>

class QLocalServer;

namespace cmcp {

class AdminLogSink;
class AdminPeer;
class AdminSettings;
class CallProgress;
class McpServer;
class SessionWorkspaces;
struct ToolResult;

// The daemon's side of the admin channel: a local socket only root, the daemon's own user and
// ADMIN_GROUP may use (mode 0600/0660, every peer checked with SO_PEERCRED), the events of the
// MCP core forwarded to every console, and the consoles' requests answered. It observes the
// core through its signals and steers it only through McpServer's public calls.
class AdminServer : public QObject
{
    Q_OBJECT
public:
    static constexpr int recentCallsKept = 200;

    AdminServer(McpServer &mcp, AdminSettings &settings, SessionWorkspaces &workspaces,
                admin::SandboxReport sandboxReport, QObject *parent = nullptr);
    ~AdminServer() override;

    // Creates the socket with its final mode from the start (umask), replacing a stale socket
    // file but never a live one. `adminGroup`: who besides root and our uid may connect.
    bool listen(const QString &path, std::optional<gid_t> adminGroup, QString *error);
    // Forwards the daemon's log lines to consoles that ask for them.
    void forwardLogs();

    // "ADMIN_GROUP" name to gid; nullopt with an error when there is no such group.
    static std::optional<gid_t> groupId(const QString &name, QString *error);

private:
    // What a request handler answers: a reply's result, or an error (code set).
    struct Answer
    {
        QJsonObject result;
        const char *errorCode = nullptr;
        QString errorMessage;

        static Answer reply(QJsonObject result) { return {std::move(result), nullptr, {}}; }
        static Answer error(const char *code, const QString &message)
        {
            return {{}, code, message};
        }
    };
    using RequestHandler = Answer (AdminServer::*)(AdminPeer &peer, const QJsonObject &params);
    // Request methods and their handlers.
    static const QHash<QString, RequestHandler> &requestHandlers();

    void acceptPeers();
    void broadcast(const QString &event, const QJsonObject &data);
    // An event record (one with a static `event` name) to every console.
    template<typename Event>
    void broadcast(const Event &event)
    {
        if (!m_peers.isEmpty())
            broadcast(QLatin1String(Event::event), event.toJson());
    }
    void handleRequest(AdminPeer *peer, const admin::Message &request);
    Answer snapshot(AdminPeer &peer, const QJsonObject &params);
    Answer cancelCall(AdminPeer &peer, const QJsonObject &params);
    Answer closeSession(AdminPeer &peer, const QJsonObject &params);
    Answer setSetting(AdminPeer &peer, const QJsonObject &params);
    Answer subscribeLog(AdminPeer &peer, const QJsonObject &params);
    Answer listWorkspaces(AdminPeer &peer, const QJsonObject &params);
    Answer deleteWorkspace(AdminPeer &peer, const QJsonObject &params);
    Answer reloadPolicy(AdminPeer &peer, const QJsonObject &params);
    admin::CountersRecord counters() const;
    QList<admin::SessionRecord> sessions() const;
    void onCallStarted(const ToolCallRecord &call);
    void onCallFinished(const ToolCallRecord &call, const ToolResult *result);
    void onLogLine(int level, const QString &logger, const QString &text);

    struct SessionInfo
    {
        QString transport;
        QDateTime openedAt;
        QString clientName;
        int calls = 0;
    };

    McpServer &m_mcp;
    AdminSettings &m_settings;
    SessionWorkspaces &m_workspaces;
    admin::SandboxReport m_sandboxReport;
    QLocalServer *m_server = nullptr;
    std::optional<gid_t> m_adminGroup;
    QList<AdminPeer *> m_peers;
    QHash<QString, SessionInfo> m_sessions;
    std::deque<admin::CallRecord> m_recentCalls;
    quint64 m_callsStarted = 0;
    quint64 m_callsFinished = 0;
    quint64 m_callsFailed = 0;
    quint64 m_refusedPeers = 0;
    QTimer m_countersTimer;
    std::optional<admin::CountersRecord> m_lastCounters; // the last sent
    CallProgress *m_progress;
    std::shared_ptr<AdminLogSink> m_logSink;
    bool m_forwardingLog = false;
};

} // namespace cmcp
