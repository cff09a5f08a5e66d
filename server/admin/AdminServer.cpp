#include "AdminServer.h"

#include "AdminLogSink.h"
#include "AdminPeer.h"
#include "AdminSettings.h"
#include "CallDescription.h"
#include "CallProgress.h"
#include "McpServer.h"
#include "PeerCredentials.h"
#include "ToolResult.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QLocalServer>
#include <QLocalSocket>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

using admin::Message;

namespace {

QString systemError()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

std::optional<int> logLevelNumber(const QString &name)
{
    static const QStringList names{QStringLiteral("trace"), QStringLiteral("debug"),
                                   QStringLiteral("info"), QStringLiteral("warning"),
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
    struct stat status{};
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
        *error = QStringLiteral("cannot remove the stale socket %1: %2").arg(path, systemError());
        return false;
    }
    return true;
}

} // namespace

AdminServer::AdminServer(McpServer &mcp, AdminSettings &settings, QJsonObject sandboxReport,
                         QObject *parent)
    : QObject(parent),
      m_mcp(mcp),
      m_settings(settings),
      m_sandboxReport(std::move(sandboxReport)),
      m_progress(new CallProgress(admin::progressIntervalMs, this))
{
    connect(&mcp, &McpServer::sessionOpened, this, [this](const QString &id, const QString &transport) {
        m_sessions.insert(id, {transport, QDateTime::currentDateTimeUtc(), {}, 0});
        broadcast(QLatin1String(admin::eventSessionOpened),
                  {{QLatin1String("sessionId"), id}, {QLatin1String("transport"), transport},
                   {QLatin1String("openedAt"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)}});
    });
    connect(&mcp, &McpServer::sessionClosed, this, [this](const QString &id, const QString &reason) {
        m_sessions.remove(id);
        broadcast(QLatin1String(admin::eventSessionClosed),
                  {{QLatin1String("sessionId"), id}, {QLatin1String("reason"), reason}});
    });
    connect(&mcp, &McpServer::toolCallStarted, this, &AdminServer::onCallStarted);
    connect(&mcp, &McpServer::toolCallFinished, this, &AdminServer::onCallFinished);
    connect(&mcp, &McpServer::toolCallOutput, m_progress, &CallProgress::output);
    connect(m_progress, &CallProgress::progress, this, [this](const QJsonObject &progress) {
        broadcast(QLatin1String(admin::eventCallProgress), progress);
    });
    connect(&settings, &AdminSettings::settingChanged, this, [this](const QJsonObject &setting) {
        broadcast(QLatin1String(admin::eventSettingChanged), {{QLatin1String("setting"), setting}});
    });
    // Counters go out once a second, and only when they changed.
    m_countersTimer.setInterval(1000);
    connect(&m_countersTimer, &QTimer::timeout, this, [this] {
        const QJsonObject now = counters();
        if (now != m_lastCounters && !m_peers.isEmpty()) {
            m_lastCounters = now;
            broadcast(QLatin1String(admin::eventCounters), now);
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
            *error = QStringLiteral("cannot give %1 to group %2: %3").arg(path).arg(*adminGroup).arg(systemError());
            return false;
        }
    }
    connect(m_server, &QLocalServer::newConnection, this, &AdminServer::acceptPeers);
    spdlog::info("admin channel on {} (mode {})", m_server->fullServerName().toStdString(),
                 adminGroup ? "0660" : "0600");
    return true;
}

QString AdminServer::socketPath() const
{
    return m_server ? m_server->fullServerName() : QString();
}

void AdminServer::forwardLogs()
{
    m_logSink = AdminLogSink::install(this, [this](int level, const QString &logger, const QString &text) {
        onLogLine(level, logger, text);
    });
}

void AdminServer::acceptPeers()
{
    while (QLocalSocket *socket = m_server->nextPendingConnection()) {
        QString problem;
        const std::optional<PeerCredentials> peer = PeerCredentials::ofSocket(int(socket->socketDescriptor()), &problem);
        if (peer)
            problem = refusalOf(*peer, ::geteuid(), m_adminGroup);
        if (!problem.isEmpty()) {
            ++m_refusedPeers;
            spdlog::warn("admin: connection refused: {}", problem.toStdString());
            socket->write(admin::encode(Message::error(std::nullopt, QLatin1String(admin::errorRefused),
                                                       QStringLiteral("not authorized to use the admin channel"))));
            socket->disconnectFromServer();
            connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
            continue;
        }
        const QString description = QStringLiteral("console uid %1 pid %2").arg(peer->uid).arg(peer->pid);
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
    broadcast(QLatin1String(admin::eventCallStarted), {{QLatin1String("call"), describeCall(call, false, nullptr)}});
}

void AdminServer::onCallFinished(const ToolCallRecord &call, const ToolResult *result)
{
    ++m_callsFinished;
    m_progress->finished(call.callId);
    if (call.outcome != ToolCallOutcome::Succeeded)
        ++m_callsFailed;
    const QJsonObject description = describeCall(call, true, result);
    m_recentCalls.push_back(description);
    if (m_recentCalls.size() > recentCallsKept)
        m_recentCalls.pop_front();
    broadcast(QLatin1String(admin::eventCallFinished), {{QLatin1String("call"), description}});
}

void AdminServer::onLogLine(int level, const QString &logger, const QString &text)
{
    // A line logged while forwarding (a slow peer's warning) must not loop back.
    if (m_forwardingLog)
        return;
    m_forwardingLog = true;
    const auto levelName = spdlog::level::to_string_view(spdlog::level::level_enum(level));
    const Message message = Message::event(QLatin1String(admin::eventLog),
                                           {{QLatin1String("level"), QString::fromLatin1(levelName.data(), qsizetype(levelName.size()))},
                                            {QLatin1String("logger"), logger},
                                            {QLatin1String("text"), text},
                                            {QLatin1String("time"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)}});
    for (AdminPeer *peer : std::as_const(m_peers)) {
        if (peer->logLevel() >= 0 && level >= peer->logLevel() && level < int(spdlog::level::off))
            peer->sendEvent(message);
    }
    m_forwardingLog = false;
}

QJsonObject AdminServer::counters() const
{
    quint64 dropped = 0;
    for (const AdminPeer *peer : m_peers)
        dropped += peer->droppedTotal();
    return {{QLatin1String("sessionsOpen"), m_mcp.sessionCount()},
            {QLatin1String("callsStarted"), double(m_callsStarted)},
            {QLatin1String("callsFinished"), double(m_callsFinished)},
            {QLatin1String("callsInFlight"), double(m_callsStarted - m_callsFinished)},
            {QLatin1String("callsFailed"), double(m_callsFailed)},
            {QLatin1String("eventsDropped"), double(dropped)},
            {QLatin1String("peersRefused"), double(m_refusedPeers)}};
}

QJsonArray AdminServer::sessions() const
{
    QJsonArray list;
    for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
        QString clientName = it->clientName;
        if (const auto session = m_mcp.findSession(it.key()))
            clientName = session->clientInfo().value(QLatin1String("name")).toString();
        list.append(QJsonObject{{QLatin1String("sessionId"), it.key()},
                                {QLatin1String("transport"), it->transport},
                                {QLatin1String("clientName"), clientName},
                                {QLatin1String("openedAt"), it->openedAt.toString(Qt::ISODateWithMs)},
                                {QLatin1String("calls"), it->calls}});
    }
    return list;
}

QJsonObject AdminServer::snapshot() const
{
    QJsonArray inFlight;
    for (const ToolCallRecord &call : m_mcp.callsInFlight()) {
        QJsonObject description = describeCall(call, false, nullptr);
        const QJsonObject figures = m_progress->figures(call.callId);
        for (auto it = figures.begin(); it != figures.end(); ++it)
            description.insert(it.key(), it.value());
        inFlight.append(description);
    }
    QJsonArray recent;
    for (const QJsonObject &call : m_recentCalls)
        recent.append(call);
    return {{QLatin1String("sessions"), sessions()},
            {QLatin1String("calls"), inFlight},
            {QLatin1String("recentCalls"), recent},
            {QLatin1String("config"), m_settings.describe()},
            {QLatin1String("customEnvFile"), m_settings.customEnvFile()},
            {QLatin1String("sandbox"), m_sandboxReport},
            {QLatin1String("counters"), counters()}};
}

void AdminServer::handleRequest(AdminPeer *peer, const Message &request)
{
    const qint64 id = request.id.value_or(0);
    const auto fail = [peer, id](const char *code, const QString &message) {
        peer->send(Message::error(id, QLatin1String(code), message));
    };
    const QJsonObject &params = request.body;
    if (request.name == QLatin1String(admin::methodSnapshot)) {
        peer->send(Message::reply(id, snapshot()));
    } else if (request.name == QLatin1String(admin::methodCancelCall)) {
        const QJsonValue callId = params.value(QLatin1String("callId"));
        if (!callId.isDouble() || callId.toDouble() < 1)
            return fail(admin::errorBadParams, QStringLiteral("cancelCall needs a positive integer \"callId\""));
        const QString reason = QStringLiteral("cancelled by an administrator (%1)").arg(peer->description());
        if (!m_mcp.cancelCall(quint64(callId.toDouble()), reason))
            return fail(admin::errorNotFound, QStringLiteral("no call %1 is running").arg(qint64(callId.toDouble())));
        spdlog::info("admin: call {} {}", qint64(callId.toDouble()), reason.toStdString());
        peer->send(Message::reply(id, {}));
    } else if (request.name == QLatin1String(admin::methodCloseSession)) {
        const QString sessionId = params.value(QLatin1String("sessionId")).toString();
        if (sessionId.isEmpty())
            return fail(admin::errorBadParams, QStringLiteral("closeSession needs a string \"sessionId\""));
        if (!m_mcp.findSession(sessionId))
            return fail(admin::errorNotFound, QStringLiteral("no session %1 is open").arg(sessionId));
        spdlog::info("admin: session {} closed by {}", sessionId.toStdString(), peer->description().toStdString());
        m_mcp.closeSession(sessionId, QStringLiteral("closed by an administrator"));
        peer->send(Message::reply(id, {}));
    } else if (request.name == QLatin1String(admin::methodSetSetting)) {
        const QString name = params.value(QLatin1String("name")).toString();
        const QJsonValue value = params.value(QLatin1String("value"));
        if (name.isEmpty() || !value.isString())
            return fail(admin::errorBadParams, QStringLiteral("setSetting needs strings \"name\" and \"value\""));
        const AdminSettings::Outcome outcome = m_settings.change(name, value.toString());
        if (!outcome.error.isEmpty())
            return fail(admin::errorInvalidValue, outcome.error);
        peer->send(Message::reply(id, {{QLatin1String("setting"), m_settings.describe(*findSettingSpec(name))},
                                       {QLatin1String("appliedLive"), outcome.appliedLive},
                                       {QLatin1String("restartRequired"), !outcome.appliedLive},
                                       {QLatin1String("note"), outcome.note}}));
    } else if (request.name == QLatin1String(admin::methodSubscribeLog)) {
        const QString level = params.value(QLatin1String("level")).toString();
        const std::optional<int> number = logLevelNumber(level);
        if (!number)
            return fail(admin::errorBadParams, QStringLiteral("subscribeLog needs \"level\": one of trace, debug, info, warning, error, critical, off"));
        peer->setLogLevel(*number);
        peer->send(Message::reply(id, {{QLatin1String("level"), level.toLower()}}));
    } else {
        fail(admin::errorUnknownMethod, QStringLiteral("unknown method \"%1\"").arg(request.name));
    }
}

} // namespace cmcp
