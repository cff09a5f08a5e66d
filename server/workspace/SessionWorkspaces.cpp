#include "workspace/SessionWorkspaces.h"

#include "common/Settings.h"
#include "common/UnguessableId.h"
#include "mcp/McpServer.h"
#include "posix/Btrfs.h"
#include "posix/ErrnoText.h"
#include "posix/TreeRemoval.h"
#include "posix/UniqueFd.h"
#include "workspace/WorkspaceCheckpoints.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTimer>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>

namespace cmcp {

namespace {

void removeWorkspace(const QString &path)
{
    WorkspaceCheckpoints::removeAllOf(path);
    QString error;
    // A subvolume goes in one call, however large (the kernel frees its space afterwards).
    const QFileInfo info(path);
    const UniqueFd parent(::open(QFile::encodeName(info.absolutePath()).constData(),
                                 O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    const QByteArray name = QFile::encodeName(info.fileName());
    const UniqueFd workspace(parent.isValid()
                                     ? ::openat(parent.get(), name.constData(),
                                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                     : -1);
    if (workspace.isValid() && btrfs::isSubvolumeRoot(workspace.get())
        && btrfs::deleteSubvolume(parent.get(), name) == 0)
        return;
    if (!removeTree(path, &error))
        spdlog::warn("workspaces: {}", error.toStdString());
}

} // namespace

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
            removeWorkspace(path);
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

SessionWorkspaces::SessionWorkspaces(Workspace shared, Mode mode, int keepSeconds, QObject *parent)
    : QObject(parent),
      m_shared(std::move(shared)),
      m_mode(mode),
      m_keepSeconds(keepSeconds),
      m_holds(std::make_shared<Holds>())
{
    setObjectName(QStringLiteral("cmcp::SessionWorkspaces"));
    m_holds->owner = this;
    m_removals.setMaxThreadCount(1);
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
            removeWorkspace(entry.value());
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
    auto *workspaces = new SessionWorkspaces(Workspace::fromSettings(settings), mode,
                                             int(keepSeconds), &server);
    connect(&server, &McpServer::sessionClosed, workspaces,
            [workspaces](const QString &sessionId) { workspaces->endSession(sessionId); });
    QString error;
    if (mode == Mode::PerSession && !workspaces->removeLeftovers(&error))
        spdlog::warn("workspaces: {}", error.toStdString());
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
        if (!QDir().mkpath(parent) || ::chmod(QFile::encodeName(parent).constData(), 0711) != 0) {
            *error = QStringLiteral("cannot create the sessions directory %1").arg(parent);
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

void SessionWorkspaces::endSession(const QString &sessionId)
{
    Q_EMIT sessionEnded(sessionId);
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
    m_removals.start([path] { removeWorkspace(path); });
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
    const UniqueFd sessions(::open(QFile::encodeName(directory).constData(),
                                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sessions.isValid()) {
        if (errno == ENOENT)
            return true;
        *error = QStringLiteral("cannot open %1: %2").arg(directory, errnoText(errno));
        return false;
    }
    QString why;
    if (removeTreeContents(sessions.get(), &why))
        return true;
    *error = QStringLiteral("cannot remove all that a previous run left in %1: %2")
                     .arg(directory, why);
    return false;
}

} // namespace cmcp
