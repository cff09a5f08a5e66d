#pragma once

#include "workspace/NamedWorkspaces.h"
#include "workspace/Workspace.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QTimer>

#include <memory>
#include <optional>

namespace cmcp {

class McpServer;
class Settings;
class ToolCall;

// Which workspace a session's file tools, resources and jobs use (SANDBOX_WORKSPACE): the one
// shared directory, or a directory of the session's own, <SANDBOX_ROOT>/sessions/<128 random
// bits>, created on the session's first use and removed when it ends (after
// SANDBOX_WORKSPACE_KEEP_SECONDS). The sessions directory is mode 0711, so no job can list
// the names of the others; each name is unguessable, and a jail sees its own workspace only.
//
// A workspace is never removed while a job runs in it: every job placed in a session's
// workspace holds it (holdForJob) until the job and every process of its uid have ended, so a
// job that outlives its session (taken over with job_attach) keeps its files for as long as
// it runs, and the workspace goes when the last job holding it ends. Removal runs on a thread
// of its own, by descriptors (removeTree), since jobs may have planted links anywhere in it.
//
// Beside these, a call may name one of its principal's named workspaces (NamedWorkspaces) in
// its `workspace` argument, or work in the one its session opened (select): forCall decides.
class SessionWorkspaces : public QObject
{
    Q_OBJECT
public:
    enum class Mode { Shared, PerSession };

    SessionWorkspaces(Workspace shared, Mode mode, int keepSeconds,
                      NamedWorkspaces::Limits namedLimits = {}, QObject *parent = nullptr);
    ~SessionWorkspaces() override;

    // The one instance of `server`, made from the settings on first use, so that the file tools
    // and the system tools agree on every session's directory; it follows the server's
    // sessionClosed. At creation in per-session mode it removes what a previous run left in the
    // sessions directory.
    static SessionWorkspaces &of(McpServer &server, const Settings &settings);
    static std::optional<Mode> modeFromText(const QString &text);

    Mode mode() const { return m_mode; }
    const Workspace &shared() const { return m_shared; }
    // Session id -> the directory of its own workspace, for the sessions that have one now.
    const QHash<QString, QString> &sessionDirectories() const { return m_paths; }
    // <SANDBOX_ROOT>/sessions
    QString sessionsDirectory() const;

    // The session's workspace, created now if this is its first use. nullopt with a reason when
    // the directory cannot be created.
    std::optional<Workspace> forSession(const QString &sessionId, QString *error);
    // The workspace `call` works in: the named workspace of its `workspace` argument, else the
    // one its session opened, else the session's (forSession). A name or id that is not the
    // caller's principal's is refused as one that does not exist.
    std::optional<Workspace> forCall(const ToolCall &call, QString *error);

    NamedWorkspaces &named() { return m_named; }
    const NamedWorkspaces &named() const { return m_named; }
    // The session's calls work in the named workspace `id` until another is selected; an empty
    // id gives it back its own.
    void select(const QString &sessionId, const QString &id);
    QString selected(const QString &sessionId) const { return m_selected.value(sessionId); }
    // Deletes a named workspace: it no longer exists for anyone (a session that had it open gets
    // "no such workspace" until it opens another), its jobs are killed
    // (workspaceRemoving) and its directory and checkpoints go once the last has ended.
    bool removeNamed(const NamedWorkspace &workspace, QString *error);
    // Deletes the named workspaces unused for SANDBOX_WORKSPACE_NAMED_IDLE_SECONDS (a timer
    // calls it when the setting is above 0); one a job runs in is in use. Returns how many.
    int reclaimIdle();
    // The session has ended: its directory goes after the keep time once no job holds it. When
    // this object goes first (the server stops), what no job holds goes at once, the rest when
    // its last job ends.
    void endSession(const QString &sessionId);
    // Removes everything in the sessions directory (start-up: no session survives a restart).
    bool removeLeftovers(QString *error) const;

    // What a job placed in `workspace` keeps until it has ended: while any is kept, the
    // directory is not removed (the shared one never is; its holds count its jobs).
    using Hold = std::shared_ptr<const void>;
    Hold holdForJob(const Workspace &workspace);
    // The jobs holding `workspace` now.
    int jobsIn(const Workspace &workspace) const;
    // `workspace` got another tree (a checkpoint restored): whatever was started in the old one
    // and waits for a call (pre-started jobs) must start again.
    void replaced(const Workspace &workspace);
    // Removals started and not yet finished wait for this (tests; the destructor waits too).
    void waitForRemovals();

    // What the holds share with this object (defined beside it).
    struct Holds;

Q_SIGNALS:
    // The session has ended: whoever keeps something for it lets go.
    void sessionEnded(const QString &sessionId);
    void workspaceReplaced(const QString &path);
    // The workspace at `path` is being deleted: every job in it is to be killed, every open
    // descriptor of it dropped.
    void workspaceRemoving(const QString &path);

private:
    void keepTimeOver(const QString &sessionId);
    void removeLater(const QString &sessionId, const QString &path);

    const Workspace m_shared;
    const Mode m_mode;
    const int m_keepSeconds;
    QHash<QString, QString> m_paths; // session id -> directory, until removed
    QHash<QString, QString> m_ending; // ended sessions whose directory awaits removal
    NamedWorkspaces m_named;
    QHash<QString, QString> m_selected; // session id -> id of the named workspace it opened
    QTimer m_idleSweep;
    std::shared_ptr<Holds> m_holds; // shared with every hold, which may outlive this object
    QThreadPool m_removals; // one thread: removing a large tree must not stall the event loop
};

} // namespace cmcp
