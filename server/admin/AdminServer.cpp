#include "admin/AdminServer.h"

#include "common/AdminLogRecords.h"
#include "admin/AdminLogSink.h"
#include "admin/AdminPeer.h"
#include "common/AdminSessionRecords.h"
#include "common/AdminSettingRecords.h"
#include "admin/AdminSettings.h"
#include "admin/CallDescription.h"
#include "admin/CallProgress.h"
#include "posix/ErrnoText.h"
#include "mcp/McpServer.h"
#include "admin/PeerCredentials.h"
#include "mcp/ToolResult.h"
#include "admin/WorkspaceDescription.h"
#include "common/AdminWorkspaceRecords.h"
#include "workspace/SessionWorkspaces.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

using admin::Message;

namespace {

std::optional<int> logLevelNumber(const QString &name)
{
    static const QStringList names{QStringLiteral("trace"), QStringLiteral("debug"),
                                   QStringLiteral("info"),  QStringLiteral("warning"),
                                   QStringLiteral("error"), QStringLiteral("critical"),
                                   QStringLiteral("off")};
    const QString lower = name.trimmed().toLower();
    const qsizetype index = names.indexOf(lower == u"warn" ? QStringLiteral("warning") : lower);
    if (index < 0)
        return std::nullopt;
    return int(index); // spdlog's level_enum: trace = 0 ... off = 6
}

// A stale socket file (its daemon is gone) may be replaced; a live one or any other file not.
bool clearSocketPath(const QString &path, QString *error)
{
    struct stat status
    {
    };
    if (::lstat(QFile::encodeName(path).constData(), &status) != 0)
        return true;
    if (!S_ISSOCK(status.st_mode)) {
        *error = QStringLiteral("%1 exists and is not a socket").arg(path);
        return false;
    }
    QLocalSocket probe;
    probe.connectToServer(path);
    if (probe.waitForConnected(500)) {
        *error = QStringLiteral("another daemon already listens on %1").arg(path);
        return false;
    }
    if (::unlink(QFile::encodeName(path).constData()) != 0) {
        *error =
                QStringLiteral("cannot remove the stale socket %1: %2").arg(path, errnoText(errno));
        return false;
    }
    return true;
}

} // namespace

AdminServer::AdminServer(McpServer &mcp, AdminSettings &settings, SessionWorkspaces &workspaces,
                         admin::SandboxReport sandboxReport, QObject *parent)
    : QObject(parent),
      m_mcp(mcp),
      m_settings(settings),
      m_workspaces(workspaces),
      m_sandboxReport(std::move(sandboxReport)),
      m_progress(new CallProgress(admin::progressIntervalMs, this))
{
    connect(&mcp, &McpServer::sessionOpened, this,
            [this](const QString &id, const QString &transport) {
                const QDateTime openedAt = QDateTime::currentDateTimeUtc();
                m_sessions.insert(id, {transport, openedAt, {}, 0});
                broadcast(admin::SessionOpenedEvent{id, transport, openedAt});
            });
    connect(&mcp, &McpServer::sessionClosed, this,
            [this](const QString &id, const QString &reason) {
                m_sessions.remove(id);
                broadcast(admin::SessionClosedEvent{id, reason});
            });
    connect(&mcp, &McpServer::toolCallStarted, this, &AdminServer::onCallStarted);
    connect(&mcp, &McpServer::toolCallFinished, this, &AdminServer::onCallFinished);
    connect(&mcp, &McpServer::toolCallOutput, m_progress, &CallProgress::output);
    connect(m_progress, &CallProgress::progress, this,
            [this](const admin::ProgressRecord &progress) { broadcast(progress); });
    connect(&settings, &AdminSettings::settingChanged, this,
            [this](const admin::SettingRecord &setting) {
                broadcast(admin::SettingChangedEvent{setting});
            });
    // Counters go out once a second, and only when they changed.
    m_countersTimer.setInterval(1000);
    connect(&m_countersTimer, &QTimer::timeout, this, [this] {
        const admin::CountersRecord now = counters();
        if (now != m_lastCounters && !m_peers.isEmpty()) {
            m_lastCounters = now;
            broadcast(now);
        }
    });
    m_countersTimer.start();
}

AdminServer::~AdminServer()
{
    if (m_logSink)
        m_logSink->detach();
    if (m_server)
        m_server->close(); // removes the socket file
}

std::optional<gid_t> AdminServer::groupId(const QString &name, QString *error)
{
    const group *entry = ::getgrnam(name.toLocal8Bit().constData());
    if (!entry) {
        *error = QStringLiteral("ADMIN_GROUP=\"%1\": no such group").arg(name);
        return std::nullopt;
    }
    return entry->gr_gid;
}

bool AdminServer::listen(const QString &givenPath, std::optional<gid_t> adminGroup, QString *error)
{
    // QLocalServer puts names that do not start with '/' in the temporary directory.
    const QString path = QFileInfo(givenPath).absoluteFilePath();
    m_adminGroup = adminGroup;
    const QString directory = QFileInfo(path).absolutePath();
    if (!QFileInfo::exists(directory)) {
        if (!QDir().mkpath(directory)) {
            *error = QStringLiteral("cannot create %1").arg(directory);
            return false;
        }
        // Our own directory: only its owner (and the admin group) may look inside.
        ::chmod(QFile::encodeName(directory).constData(), adminGroup ? 0750 : 0700);
        if (adminGroup)
            (void)::chown(QFile::encodeName(directory).constData(), uid_t(-1), *adminGroup);
    }
    if (!clearSocketPath(path, error))
        return false;

    m_server = new QLocalServer(this);
    // bind() creates the socket file with 0777 & ~umask: with 0177 it is 0600 from its first
    // instant, so no one else can connect in between. umask is process-wide; threads that create
    // files meanwhile get stricter modes at worst.
    const mode_t previousMask = ::umask(0177);
    const bool listening = m_server->listen(path);
    ::umask(previousMask);
    if (!listening) {
        *error = QStringLiteral("cannot listen on %1: %2").arg(path, m_server->errorString());
        return false;
    }
    const QByteArray socketFile = QFile::encodeName(m_server->fullServerName());
    if (adminGroup) {
        if (::chown(socketFile.constData(), uid_t(-1), *adminGroup) != 0
            || ::chmod(socketFile.constData(), 0660) != 0) {
            *error = QStringLiteral("cannot give %1 to group %2: %3")
                             .arg(path)
                             .arg(*adminGroup)
                             .arg(errnoText(errno));
            return false;
        }
    }
    connect(m_server, &QLocalServer::newConnection, this, &AdminServer::acceptPeers);
    spdlog::info("admin channel on {} (mode {})", m_server->fullServerName().toStdString(),
                 adminGroup ? "0660" : "0600");
    return true;
}

void AdminServer::forwardLogs()
{
    m_logSink = AdminLogSink::install(
            this, [this](int level, const QString &logger, const QString &text) {
                onLogLine(level, logger, text);
            });
}

void AdminServer::acceptPeers()
{
    while (QLocalSocket *socket = m_server->nextPendingConnection()) {
        QString problem;
        const std::optional<PeerCredentials> peer =
                PeerCredentials::ofSocket(int(socket->socketDescriptor()), &problem);
        if (peer)
            problem = refusalOf(*peer, ::geteuid(), m_adminGroup);
        if (!problem.isEmpty()) {
            ++m_refusedPeers;
            spdlog::warn("admin: connection refused: {}", problem.toStdString());
            socket->write(admin::encode(
                    Message::error(std::nullopt, QLatin1String(admin::errorRefused),
                                   QStringLiteral("not authorized to use the admin channel"))));
            socket->disconnectFromServer();
            connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
            continue;
        }
        const QString description =
                QStringLiteral("console uid %1 pid %2").arg(peer->uid).arg(peer->pid);
        spdlog::info("admin: {} connected", description.toStdString());
        auto *adminPeer = new AdminPeer(socket, description, this);
        m_peers.append(adminPeer);
        connect(adminPeer, &AdminPeer::requestReceived, this, &AdminServer::handleRequest);
        connect(adminPeer, &AdminPeer::gone, this, [this](AdminPeer *gone) {
            spdlog::info("admin: {} disconnected", gone->description().toStdString());
            m_peers.removeOne(gone);
            gone->deleteLater();
        });
    }
}

void AdminServer::broadcast(const QString &event, const QJsonObject &data)
{
    if (m_peers.isEmpty())
        return;
    const Message message = Message::event(event, data);
    for (AdminPeer *peer : std::as_const(m_peers))
        peer->sendEvent(message);
}

void AdminServer::onCallStarted(const ToolCallRecord &call)
{
    ++m_callsStarted;
    auto session = m_sessions.find(call.sessionId);
    if (session != m_sessions.end()) {
        ++session->calls;
        session->clientName = call.clientName;
    }
    m_progress->started(call.callId, call.startedAt);
    broadcast(admin::CallStartedEvent{describeCall(call, false, nullptr)});
}

void AdminServer::onCallFinished(const ToolCallRecord &call, const ToolResult *result)
{
    ++m_callsFinished;
    m_progress->finished(call.callId);
    if (call.outcome != ToolCallOutcome::Succeeded)
        ++m_callsFailed;
    const admin::CallRecord description = describeCall(call, true, result);
    m_recentCalls.push_back(description);
    if (m_recentCalls.size() > recentCallsKept)
        m_recentCalls.pop_front();
    broadcast(admin::CallFinishedEvent{description});
}

void AdminServer::onLogLine(int level, const QString &logger, const QString &text)
{
    // A line logged while forwarding (a slow peer's warning) must not loop back.
    if (m_forwardingLog)
        return;
    m_forwardingLog = true;
    const auto levelName = spdlog::level::to_string_view(spdlog::level::level_enum(level));
    const admin::LogLineEvent line{
            QString::fromLatin1(levelName.data(), qsizetype(levelName.size())), logger, text,
            QDateTime::currentDateTimeUtc()};
    const Message message =
            Message::event(QLatin1String(admin::LogLineEvent::event), line.toJson());
    for (AdminPeer *peer : std::as_const(m_peers)) {
        if (peer->logLevel() >= 0 && level >= peer->logLevel() && level < int(spdlog::level::off))
            peer->sendEvent(message);
    }
    m_forwardingLog = false;
}

admin::CountersRecord AdminServer::counters() const
{
    quint64 dropped = 0;
    for (const AdminPeer *peer : m_peers)
        dropped += peer->droppedTotal();
    admin::CountersRecord counters;
    counters.sessionsOpen = m_mcp.sessionCount();
    counters.callsStarted = qint64(m_callsStarted);
    counters.callsFinished = qint64(m_callsFinished);
    counters.callsInFlight = qint64(m_callsStarted - m_callsFinished);
    counters.callsFailed = qint64(m_callsFailed);
    counters.eventsDropped = qint64(dropped);
    counters.peersRefused = qint64(m_refusedPeers);
    counters.templates = m_mcp.health().liveStatus(QStringLiteral("call_templates"));
    return counters;
}

QList<admin::SessionRecord> AdminServer::sessions() const
{
    QList<admin::SessionRecord> list;
    for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
        QString clientName = it->clientName;
        if (const auto session = m_mcp.findSession(it.key()))
            clientName = session->clientInfo().value(QLatin1String("name")).toString();
        list.append(
                admin::SessionRecord{it.key(), it->transport, clientName, it->openedAt, it->calls});
    }
    return list;
}

const QHash<QString, AdminServer::RequestHandler> &AdminServer::requestHandlers()
{
    static const QHash<QString, RequestHandler> handlers{
            {QLatin1String(admin::methodSnapshot), &AdminServer::snapshot},
            {QLatin1String(admin::CancelCallParams::method), &AdminServer::cancelCall},
            {QLatin1String(admin::CloseSessionParams::method), &AdminServer::closeSession},
            {QLatin1String(admin::SetSettingParams::method), &AdminServer::setSetting},
            {QLatin1String(admin::SubscribeLogParams::method), &AdminServer::subscribeLog},
            {QLatin1String(admin::ListWorkspacesResult::method), &AdminServer::listWorkspaces},
            {QLatin1String(admin::DeleteWorkspaceParams::method), &AdminServer::deleteWorkspace},
            {QLatin1String(admin::methodReloadPolicy), &AdminServer::reloadPolicy},
    };
    return handlers;
}

void AdminServer::handleRequest(AdminPeer *peer, const Message &request)
{
    const qint64 id = request.id.value_or(0);
    const RequestHandler handler = requestHandlers().value(request.name);
    if (!handler) {
        peer->send(Message::error(id, QLatin1String(admin::errorUnknownMethod),
                                  QStringLiteral("unknown method \"%1\"").arg(request.name)));
        return;
    }
    const Answer answer = (this->*handler)(*peer, request.body);
    if (answer.errorCode)
        peer->send(Message::error(id, QLatin1String(answer.errorCode), answer.errorMessage));
    else
        peer->send(Message::reply(id, answer.result));
}

AdminServer::Answer AdminServer::snapshot(AdminPeer &, const QJsonObject &)
{
    admin::SnapshotRecord snapshot;
    for (const ToolCallRecord &call : m_mcp.callsInFlight()) {
        admin::CallRecord description = describeCall(call, false, nullptr);
        description.figures = m_progress->figures(call.callId);
        snapshot.calls.append(description);
    }
    snapshot.recentCalls = QList<admin::CallRecord>(m_recentCalls.cbegin(), m_recentCalls.cend());
    snapshot.sessions = sessions();
    snapshot.config = m_settings.describe();
    snapshot.customEnvFile = m_settings.customEnvFile();
    snapshot.sandbox = m_sandboxReport;
    snapshot.counters = counters();
    return Answer::reply(snapshot.toJson());
}

AdminServer::Answer AdminServer::cancelCall(AdminPeer &peer, const QJsonObject &params)
{
    const auto cancel = admin::CancelCallParams::fromJson(params);
    if (!cancel)
        return Answer::error(admin::errorBadParams,
                             QStringLiteral("cancelCall needs a positive integer \"callId\""));
    const QString reason =
            QStringLiteral("cancelled by an administrator (%1)").arg(peer.description());
    if (!m_mcp.cancelCall(quint64(cancel->callId), reason))
        return Answer::error(admin::errorNotFound,
                             QStringLiteral("no call %1 is running").arg(cancel->callId));
    spdlog::info("admin: call {} {}", cancel->callId, reason.toStdString());
    return Answer::reply({});
}

AdminServer::Answer AdminServer::reloadPolicy(AdminPeer &peer, const QJsonObject &)
{
    PrincipalProfiles &profiles = m_mcp.profiles();
    spdlog::info("admin: policy reload asked by {}", peer.description().toStdString());
    if (QString error; !profiles.reload(&error))
        return Answer::error(admin::errorFailed, error);
    const std::shared_ptr<const PrincipalPolicy> policy = profiles.policy();
    return Answer::reply({{QLatin1String("profiles"), int(policy->profiles.size())},
                          {QLatin1String("principals"), int(policy->principals.size())}});
}

AdminServer::Answer AdminServer::closeSession(AdminPeer &peer, const QJsonObject &params)
{
    const auto close = admin::CloseSessionParams::fromJson(params);
    if (!close)
        return Answer::error(admin::errorBadParams,
                             QStringLiteral("closeSession needs a string \"sessionId\""));
    if (!m_mcp.findSession(close->sessionId))
        return Answer::error(admin::errorNotFound,
                             QStringLiteral("no session %1 is open").arg(close->sessionId));
    spdlog::info("admin: session {} closed by {}", close->sessionId.toStdString(),
                 peer.description().toStdString());
    m_mcp.closeSession(close->sessionId, QStringLiteral("closed by an administrator"));
    return Answer::reply({});
}

AdminServer::Answer AdminServer::setSetting(AdminPeer &, const QJsonObject &params)
{
    const auto change = admin::SetSettingParams::fromJson(params);
    if (!change)
        return Answer::error(admin::errorBadParams,
                             QStringLiteral("setSetting needs strings \"name\" and \"value\""));
    const AdminSettings::Outcome outcome = m_settings.change(change->name, change->value);
    if (!outcome.error.isEmpty())
        return Answer::error(admin::errorInvalidValue, outcome.error);
    const admin::SetSettingResult result{m_settings.describe(*findSettingSpec(change->name)),
                                         outcome.appliedLive, !outcome.appliedLive, outcome.note};
    return Answer::reply(result.toJson());
}

AdminServer::Answer AdminServer::subscribeLog(AdminPeer &peer, const QJsonObject &params)
{
    const admin::SubscribeLogParams subscription = admin::SubscribeLogParams::fromJson(params);
    const std::optional<int> number = logLevelNumber(subscription.level);
    if (!number)
        return Answer::error(admin::errorBadParams,
                             QStringLiteral("subscribeLog needs \"level\": one of trace, debug, "
                                            "info, warning, error, critical, off"));
    peer.setLogLevel(*number);
    return Answer::reply(admin::SubscribeLogResult{subscription.level.toLower()}.toJson());
}

AdminServer::Answer AdminServer::listWorkspaces(AdminPeer &, const QJsonObject &)
{
    return Answer::reply(describeWorkspaces(m_workspaces, m_mcp).toJson());
}

AdminServer::Answer AdminServer::deleteWorkspace(AdminPeer &peer, const QJsonObject &params)
{
    const auto target = admin::DeleteWorkspaceParams::fromJson(params);
    if (!target)
        return Answer::error(admin::errorBadParams,
                             QStringLiteral("deleteWorkspace needs a string \"workspaceId\" (a "
                                            "named workspace's ws_ id, as listWorkspaces gives)"));
    const std::optional<NamedWorkspace> found = m_workspaces.named().byId(target->workspaceId);
    if (!found) {
        if (isUnnamedWorkspace(m_workspaces, target->workspaceId))
            return Answer::error(admin::errorInvalidValue,
                                 QStringLiteral("%1 is not a named workspace: a session's own "
                                                "goes with its session (closeSession), the "
                                                "shared one is never deleted")
                                         .arg(target->workspaceId));
        return Answer::error(admin::errorNotFound,
                             QStringLiteral("no named workspace %1").arg(target->workspaceId));
    }
    const int jobs = m_workspaces.jobsIn(found->workspace);
    if (QString error; !m_workspaces.removeNamed(*found, &error))
        return Answer::error(admin::errorFailed, error);
    spdlog::info("admin: workspace '{}' ({}) of principal '{}' deleted by {}, {} job(s) killed",
                 found->name.toStdString(), found->id.toStdString(), found->owner.toStdString(),
                 peer.description().toStdString(), jobs);
    return Answer::reply(
            admin::DeleteWorkspaceResult{found->id, found->name, found->owner, jobs}.toJson());
}

} // namespace cmcp
