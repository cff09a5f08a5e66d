#include "workspace/SessionWorkspaces.h"

#include "common/Settings.h"
#include "base/UnguessableId.h"
#include "mcp/McpServer.h"
#include "mcp/ToolCall.h"
#include "posix/Btrfs.h"
#include "posix/ErrnoText.h"
#include "posix/OwnDirectory.h"
#include "posix/TreeRemoval.h"
#include "posix/UniqueFd.h"
#include "workspace/WorkspaceCheckpoints.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTimer>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>

namespace cmcp {

// The jobs running in each session workspace, shared by the SessionWorkspaces and every hold:
// a hold ends when its job does, which may be after the SessionWorkspaces is gone (the server
// stopping). Used on the event loop's thread only.
struct SessionWorkspaces::Holds
{
    QHash<QString, int> running; // directory -> jobs holding it
    QHash<QString, QString> due; // directory -> session id: removed when its last job ends
    SessionWorkspaces *owner = nullptr; // null once the owner is gone

    void release(const QString &path)
    {
        const auto held = running.find(path);
        if (held == running.end() || --*held > 0)
            return;
        running.erase(held);
        const auto removal = due.find(path);
        if (removal == due.end())
            return;
        const QString sessionId = removal.value();
        due.erase(removal);
        if (owner)
            owner->removeLater(sessionId, path);
        else
            Workspace::removeWithCheckpoints(path);
    }
};

namespace {

// One job's hold on its workspace: released when the job lets go of it.
class WorkspaceHold
{
public:
    WorkspaceHold(std::shared_ptr<SessionWorkspaces::Holds> holds, QString path)
        : m_holds(std::move(holds)),
          m_path(std::move(path))
    {
    }
    WorkspaceHold(const WorkspaceHold &) = delete;
    WorkspaceHold &operator=(const WorkspaceHold &) = delete;
    ~WorkspaceHold() { m_holds->release(m_path); }

private:
    const std::shared_ptr<SessionWorkspaces::Holds> m_holds;
    const QString m_path;
};

} // namespace

SessionWorkspaces::SessionWorkspaces(Workspace shared, Mode mode, int keepSeconds,
                                     NamedWorkspaces::Limits namedLimits, QObject *parent)
    : QObject(parent),
      m_shared(std::move(shared)),
      m_mode(mode),
      m_keepSeconds(keepSeconds),
      m_named(m_shared, namedLimits),
      m_holds(std::make_shared<Holds>())
{
    setObjectName(QStringLiteral("cmcp::SessionWorkspaces"));
    m_holds->owner = this;
    m_removals.setMaxThreadCount(1);
    if (const qint64 idle = m_named.idleSeconds(); idle > 0) {
        m_idleSweep.setInterval(
                std::chrono::milliseconds(std::clamp<qint64>(idle * 500, 500, 60000)));
        connect(&m_idleSweep, &QTimer::timeout, this, &SessionWorkspaces::reclaimIdle);
        m_idleSweep.start();
    }
}

SessionWorkspaces::~SessionWorkspaces()
{
    // No session outlives the server: what no job holds goes now, the rest with its last job
    // (the jobs are killed as the server goes).
    m_holds->owner = nullptr;
    m_removals.waitForDone();
    QHash<QString, QString> left = m_ending;
    for (auto live = m_paths.cbegin(); live != m_paths.cend(); ++live)
        left.insert(live.key(), live.value());
    for (auto entry = left.cbegin(); entry != left.cend(); ++entry) {
        if (m_holds->running.contains(entry.value()))
            m_holds->due.insert(entry.value(), entry.key());
        else
            Workspace::removeWithCheckpoints(entry.value());
    }
}

std::optional<SessionWorkspaces::Mode> SessionWorkspaces::modeFromText(const QString &text)
{
    if (text == QLatin1String("shared"))
        return Mode::Shared;
    if (text == QLatin1String("session"))
        return Mode::PerSession;
    return std::nullopt;
}

SessionWorkspaces &SessionWorkspaces::of(McpServer &server, const Settings &settings)
{
    if (auto *existing = server.findChild<SessionWorkspaces *>(
                QStringLiteral("cmcp::SessionWorkspaces"), Qt::FindDirectChildrenOnly))
        return *existing;
    // The settings table admits only the two names.
    const Mode mode = modeFromText(settings.text(u"SANDBOX_WORKSPACE")).value_or(Mode::Shared);
    // A job kept for reconnection (JOB_KEEP_SECONDS) holds its workspace for as long as it runs.
    const qint64 keepSeconds = settings.integer(u"SANDBOX_WORKSPACE_KEEP_SECONDS");
    auto *workspaces =
            new SessionWorkspaces(Workspace::fromSettings(settings), mode, int(keepSeconds),
                                  NamedWorkspaces::limitsFromSettings(settings), &server);
    workspaces->m_named.useProfiles(&server.profiles());
    connect(&server, &McpServer::sessionClosed, workspaces,
            [workspaces](const QString &sessionId) { workspaces->endSession(sessionId); });
    QString error;
    if (mode == Mode::PerSession && !workspaces->removeLeftovers(&error))
        spdlog::warn("workspaces: {}", error.toStdString());
    const int named = workspaces->m_named.load();
    spdlog::info("workspaces: {} named workspace(s) in {}{}", named,
                 workspaces->m_named.directory().toStdString(),
                 workspaces->m_named.quotaEnforced() ? "" : " (no quota: a plain directory each)");
    return *workspaces;
}

QString SessionWorkspaces::sessionsDirectory() const
{
    return QDir::cleanPath(m_shared.path() + QStringLiteral("/../sessions"));
}

std::optional<Workspace> SessionWorkspaces::forSession(const QString &sessionId, QString *error)
{
    if (m_mode == Mode::Shared)
        return m_shared;
    QString path = m_paths.value(sessionId);
    if (path.isEmpty()) {
        if (m_ending.contains(sessionId)) {
            *error = QStringLiteral("the session has ended");
            return std::nullopt;
        }
        const QString parent = sessionsDirectory();
        if (QString why; !openOwnDirectory(parent, 0711, &why).isValid()) {
            *error = QStringLiteral("cannot create the sessions directory: %1").arg(why);
            return std::nullopt;
        }
        path = QDir(parent).filePath(unguessableId("ws_"));
        m_paths.insert(sessionId, path);
    }
    const Workspace workspace = m_shared.sibling(path);
    if (!workspace.ensureExists(error))
        return std::nullopt;
    return workspace;
}

std::optional<Workspace> SessionWorkspaces::forCall(const ToolCall &call, QString *error)
{
    const QString argument = call.arguments().value(QLatin1String("workspace")).toString();
    const QString nameOrId = argument.isEmpty() ? m_selected.value(call.sessionId()) : argument;
    if (nameOrId.isEmpty())
        return forSession(call.sessionId(), error);
    const std::optional<NamedWorkspace> named = m_named.find(call.principal(), nameOrId, error);
    if (!named) {
        // Never silently elsewhere: the session's calls fail until it opens another.
        if (argument.isEmpty())
            *error += QStringLiteral("; it was this session's open workspace: workspace_open "
                                     "another, or workspace_open without one for the "
                                     "session's own");
        return std::nullopt;
    }
    m_named.touch(named->id);
    if (QString why; !named->workspace.takeOwnership(&why))
        spdlog::warn("workspaces: {}", why.toStdString());
    return named->workspace;
}

int SessionWorkspaces::reclaimIdle()
{
    int reclaimed = 0;
    for (const NamedWorkspace &idle : m_named.idle()) {
        // A job running in it (a long build, a server) is use.
        if (m_holds->running.value(idle.workspace.path()) > 0) {
            m_named.touch(idle.id);
            continue;
        }
        QString error;
        if (!removeNamed(idle, &error)) {
            spdlog::warn("workspaces: {}", error.toStdString());
            continue;
        }
        spdlog::info("workspaces: deleted '{}' of principal '{}', unused since {} "
                     "(SANDBOX_WORKSPACE_NAMED_IDLE_SECONDS)",
                     idle.name.toStdString(), idle.owner.toStdString(),
                     idle.lastUsed.toString(Qt::ISODate).toStdString());
        ++reclaimed;
    }
    return reclaimed;
}

void SessionWorkspaces::select(const QString &sessionId, const QString &id)
{
    if (id.isEmpty())
        m_selected.remove(sessionId);
    else
        m_selected.insert(sessionId, id);
}

bool SessionWorkspaces::removeNamed(const NamedWorkspace &workspace, QString *error)
{
    if (!m_named.forget(workspace, error))
        return false;
    const QString path = workspace.workspace.path();
    Q_EMIT workspaceRemoving(path);
    if (m_holds->running.value(path) > 0)
        m_holds->due.insert(path, QString());
    else
        m_removals.start([path] { Workspace::removeWithCheckpoints(path); });
    return true;
}

void SessionWorkspaces::endSession(const QString &sessionId)
{
    Q_EMIT sessionEnded(sessionId);
    m_selected.remove(sessionId);
    const QString path = m_paths.take(sessionId);
    if (path.isEmpty())
        return;
    m_ending.insert(sessionId, path);
    QTimer::singleShot(std::chrono::seconds(m_keepSeconds), this,
                       [this, sessionId] { keepTimeOver(sessionId); });
}

void SessionWorkspaces::keepTimeOver(const QString &sessionId)
{
    const QString path = m_ending.value(sessionId);
    if (path.isEmpty())
        return;
    if (const int jobs = m_holds->running.value(path); jobs > 0) {
        spdlog::info("workspaces: {} outlives its session while {} job(s) run in it",
                     path.toStdString(), jobs);
        m_holds->due.insert(path, sessionId);
        return;
    }
    removeLater(sessionId, path);
}

void SessionWorkspaces::removeLater(const QString &sessionId, const QString &path)
{
    m_ending.remove(sessionId);
    m_removals.start([path] { Workspace::removeWithCheckpoints(path); });
}

SessionWorkspaces::Hold SessionWorkspaces::holdForJob(const Workspace &workspace)
{
    // The shared workspace is never removed: its holds only count its jobs (jobsIn).
    ++m_holds->running[workspace.path()];
    return std::make_shared<const WorkspaceHold>(m_holds, workspace.path());
}

int SessionWorkspaces::jobsIn(const Workspace &workspace) const
{
    return m_holds->running.value(workspace.path());
}

void SessionWorkspaces::replaced(const Workspace &workspace)
{
    Q_EMIT workspaceReplaced(workspace.path());
}

void SessionWorkspaces::waitForRemovals()
{
    m_removals.waitForDone();
}

bool SessionWorkspaces::removeLeftovers(QString *error) const
{
    const QString directory = sessionsDirectory();
    QString why;
    const UniqueFd sessions = openOwnDirectory(directory, 0711, &why);
    if (!sessions.isValid()) {
        *error = QStringLiteral("nothing a previous run left is removed: %1").arg(why);
        return false;
    }
    if (removeTreeContents(sessions.get(), &why))
        return true;
    *error = QStringLiteral("cannot remove all that a previous run left in %1: %2")
                     .arg(directory, why);
    return false;
}

} // namespace cmcp
