#include "SessionWorkspaces.h"

#include "McpServer.h"
#include "Settings.h"
#include "UnguessableId.h"

#include <QDir>
#include <QFileInfo>
#include <QTimer>

#include <spdlog/spdlog.h>

#include <sys/stat.h>

namespace cmcp {

SessionWorkspaces::SessionWorkspaces(Workspace shared, Mode mode, int keepSeconds,
                                     QObject *parent)
    : QObject(parent),
      m_shared(std::move(shared)),
      m_mode(mode),
      m_keepSeconds(keepSeconds)
{
    setObjectName(QStringLiteral("cmcp::SessionWorkspaces"));
}

SessionWorkspaces::~SessionWorkspaces()
{
    // No session outlives the server: the directories awaiting removal go now.
    for (const QString &path : std::as_const(m_ending))
        QDir(path).removeRecursively();
    for (const QString &path : std::as_const(m_paths))
        QDir(path).removeRecursively();
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
    // A job kept for reconnection (JOB_KEEP_SECONDS) keeps its workspace as long.
    const qint64 keepSeconds = qMax(settings.integer(u"SANDBOX_WORKSPACE_KEEP_SECONDS"),
                                    settings.integer(u"JOB_KEEP_SECONDS"));
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
    Workspace workspace(path, m_shared.sandboxGid());
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
    QTimer::singleShot(qint64(m_keepSeconds) * 1000 + kJobGraceMs, this,
                       [this, sessionId] { remove(sessionId); });
}

void SessionWorkspaces::remove(const QString &sessionId)
{
    const QString path = m_ending.take(sessionId);
    // removeRecursively deletes symbolic links without following them.
    if (!path.isEmpty() && !QDir(path).removeRecursively())
        spdlog::warn("workspaces: could not remove all of {}", path.toStdString());
}

bool SessionWorkspaces::removeLeftovers(QString *error) const
{
    const QDir sessions(sessionsDirectory());
    if (!sessions.exists())
        return true;
    bool ok = true;
    for (const QFileInfo &entry :
         sessions.entryInfoList(QDir::AllEntries | QDir::Hidden | QDir::System
                                | QDir::NoDotAndDotDot)) {
        const bool removed = entry.isDir() && !entry.isSymLink()
                ? QDir(entry.filePath()).removeRecursively()
                : QFile::remove(entry.filePath());
        if (!removed) {
            *error = QStringLiteral("cannot remove %1, left by a previous run")
                             .arg(entry.filePath());
            ok = false;
        }
    }
    return ok;
}

} // namespace cmcp
