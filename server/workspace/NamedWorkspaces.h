#pragma once

#include "mcp/Principal.h"
#include "workspace/Workspace.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>

#include <optional>

namespace cmcp {

class PrincipalProfiles;
class Settings;

struct NamedWorkspace
{
    QString id; // "ws_" and 32 hex digits: its directory's name
    QString name; // the owner's name for it, unique among the owner's
    QString owner; // the principal's name
    QDateTime created; // UTC
    Workspace workspace; // its directory, group and quota
    QDateTime lastUsed; // UTC: a call named or opened it, or a job ran in it
};

// Workspaces a principal creates by name, that outlive every session and a restart of the
// daemon: <parent>/named/<id>, where <parent> is the workspace volume when it is mounted (each
// workspace a subvolume with its own quota, and checkpoints) and SANDBOX_ROOT otherwise. Each
// one's description (name, owner, created, quota) is <id>.json beside it, root's and 0600,
// written to a temporary name and renamed, so that it is either complete or absent.
//
// A workspace exists when both its directory and its description do: the directory is made
// first and the description last, and a removal takes the description first. What a crash
// left with one half only is removed by load(). The directory is 0711: no job lists the ids.
//
// Ownership: only the owner reaches a workspace, by name or by id; for anyone else it answers
// exactly as a name that does not exist.
class NamedWorkspaces
{
public:
    struct Limits
    {
        int perPrincipal = 8; // SANDBOX_WORKSPACE_NAMED_MAX
        qint64 maxQuotaMb = 4096; // SANDBOX_WORKSPACE_NAMED_MAX_MB
        qint64 idleSeconds = 0; // SANDBOX_WORKSPACE_NAMED_IDLE_SECONDS; 0: never reclaimed
    };

    // `pattern`: the workspace beside which named workspaces live (its quota is theirs when
    // none is asked for).
    NamedWorkspaces(const Workspace &pattern, Limits limits);
    static Limits limitsFromSettings(const Settings &settings);
    // A principal whose profile sets named_workspaces or named_workspace_mb has those limits
    // instead of perPrincipal and maxQuotaMb. `profiles` outlives this object.
    void useProfiles(const PrincipalProfiles *profiles) { m_profiles = profiles; }

    // <parent>/named
    const QString &directory() const { return m_directory; }
    bool quotaEnforced() const { return m_defaultQuotaBytes > 0; }
    // Whether `path` is the directory of a named workspace (of anyone's).
    bool contains(const QString &path) const
    {
        return path.startsWith(m_directory + QLatin1Char('/'));
    }

    // Reads every description; removes what a crash left half-made. Returns how many it found.
    int load();

    // A new empty workspace `name` of `owner` of `sizeMb` (the default workspace's quota when
    // nullopt). Each refusal names the setting that bounds it.
    std::optional<NamedWorkspace> create(const Principal &owner, const QString &name,
                                         std::optional<qint64> sizeMb, QString *error);
    // A new workspace `name` whose tree is a writable snapshot of the read-only tree at
    // `checkpointPath` (a checkpoint): in one system call, sharing every extent until either
    // side changes.
    std::optional<NamedWorkspace> fork(const Principal &owner, const QString &name,
                                       const QString &checkpointPath, std::optional<qint64> sizeMb,
                                       QString *error);
    // By name or by id, the owner's only.
    std::optional<NamedWorkspace> find(const Principal &owner, const QString &nameOrId,
                                       QString *error) const;
    // The owner's, by name.
    QList<NamedWorkspace> of(const Principal &owner) const;
    // Everyone's, by owner and name: for the administrator only, never for a principal.
    QList<NamedWorkspace> all() const;
    // By id, whoever owns it: for the administrator only.
    std::optional<NamedWorkspace> byId(const QString &id) const;
    // Takes the description away: from now on the workspace does not exist. Its directory and
    // checkpoints are the caller's to remove (once no job holds them).
    bool forget(const NamedWorkspace &workspace, QString *error);

    // The workspace `id` is in use now. Kept on disk at most once a minute, so that a restart
    // loses at most that much of its idle time.
    void touch(const QString &id);
    // Those unused for longer than Limits::idleSeconds (none when it is 0).
    QList<NamedWorkspace> idle() const;
    qint64 idleSeconds() const { return m_limits.idleSeconds; }

    static bool validName(const QString &name);
    // What a lookup of a name or id that is not the caller's answers.
    static QString noSuchWorkspace(const QString &nameOrId);

private:
    // The checks create and fork share; the quota in bytes when the workspace may be made.
    std::optional<qint64> admit(const Principal &owner, const QString &name,
                                std::optional<qint64> sizeMb, QString *error) const;
    bool ensureDirectory(QString *error) const;
    // Readies the directory of `made` and describes it; what failed half-way is removed.
    std::optional<NamedWorkspace> complete(NamedWorkspace made, QString *error);
    bool describe(const NamedWorkspace &workspace, QString *error);
    void removeHalfMade(const QByteArray &name) const;

    QString m_directory;
    gid_t m_sandboxGid = 0;
    WorkspaceOwner m_owner;
    qint64 m_defaultQuotaBytes = 0;
    Limits m_limits;
    const PrincipalProfiles *m_profiles = nullptr;
    QHash<QString, NamedWorkspace> m_byId;
    QHash<QString, QDateTime> m_lastUsedOnDisk; // id -> lastUsed as its description has it
};

} // namespace cmcp
