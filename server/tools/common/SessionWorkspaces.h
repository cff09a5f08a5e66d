#pragma once

#include "Workspace.h"

#include <QHash>
#include <QObject>
#include <QString>

#include <optional>

namespace cmcp {

class McpServer;
class Settings;

// Which workspace a session's file tools, resources and jobs use (SANDBOX_WORKSPACE): the one
// shared directory, or a directory of the session's own, <SANDBOX_ROOT>/sessions/<128 random
// bits>, created on the session's first use and removed when it ends (after
// SANDBOX_WORKSPACE_KEEP_SECONDS). The sessions directory is mode 0711, so no job can list
// the names of the others; each name is unguessable, and a jail sees its own workspace only.
class SessionWorkspaces : public QObject
{
    Q_OBJECT
public:
    enum class Mode { Shared, PerSession };

    SessionWorkspaces(Workspace shared, Mode mode, int keepSeconds, QObject *parent = nullptr);
    ~SessionWorkspaces() override;

    // The one instance of `server`, made from the settings on first use, so that the file tools
    // and the system tools agree on every session's directory; it follows the server's
    // sessionClosed. At creation in per-session mode it removes what a previous run left in the
    // sessions directory.
    static SessionWorkspaces &of(McpServer &server, const Settings &settings);
    static std::optional<Mode> modeFromText(const QString &text);

    Mode mode() const { return m_mode; }
    const Workspace &shared() const { return m_shared; }
    // <SANDBOX_ROOT>/sessions
    QString sessionsDirectory() const;

    // The session's workspace, created now if this is its first use. nullopt with a reason when
    // the directory cannot be created.
    std::optional<Workspace> forSession(const QString &sessionId, QString *error);
    // The session has ended: its directory goes after the keep time (and the grace jobs need
    // to be killed first), unless the server goes first (then at once).
    void endSession(const QString &sessionId);
    // Removes everything in the sessions directory (start-up: no session survives a restart).
    bool removeLeftovers(QString *error) const;

    // How long after the session's end its jobs have to die before their directory is removed.
    static constexpr int kJobGraceMs = 1500;

Q_SIGNALS:
    // The session has ended: whoever keeps something for it lets go.
    void sessionEnded(const QString &sessionId);

private:
    void remove(const QString &sessionId);

    const Workspace m_shared;
    const Mode m_mode;
    const int m_keepSeconds;
    QHash<QString, QString> m_paths; // session id -> directory, until removed
    QHash<QString, QString> m_ending; // ended sessions whose directory awaits removal
};

} // namespace cmcp
