#pragma once

#include <QString>

#include <optional>

#include <sys/types.h>

namespace cmcp {

class Settings;

// Who owns a workspace's files on disk (SANDBOX_WORKSPACE_UID, which jobs see as their own user
// through an idmapped mount), and the pool of uids jobs run as, whose files (and root's) a tree
// written before workspaces had one owner is given to that owner. uid_t(-1): whoever creates.
struct WorkspaceOwner
{
    uid_t uid = uid_t(-1);
    uid_t jobUidBase = 0;
    uid_t jobUidCount = 0;
};

// The directory the file tools and the jobs of the system tools share: <SANDBOX_ROOT>/workspace
// on the host, /workspace inside a jail. Jobs run as distinct uids of one pool that share one
// gid, so what either side creates must belong to that group and be group-writable for the
// other side to use it; ownershipApplies() says whether this process can arrange that.
class Workspace
{
public:
    Workspace() = default;
    // quotaBytes > 0: the workspace is a btrfs subvolume of the workspace volume, limited to
    // that many bytes (WorkspaceVolume).
    Workspace(QString path, gid_t sandboxGid, qint64 quotaBytes = 0, WorkspaceOwner owner = {});

    // SANDBOX_ROOT made absolute against the current directory (once, at start-up, so that a
    // later chdir cannot move it), and the pool's gid (SANDBOX_GID, 0 meaning SANDBOX_UID_BASE).
    // With the workspace volume mounted (WorkspaceVolume::prepare) the workspace is
    // <SANDBOX_ROOT>/volume/workspace, with SANDBOX_WORKSPACE_QUOTA_MB; else
    // <SANDBOX_ROOT>/workspace.
    static Workspace fromSettings(const Settings &settings);
    // SANDBOX_ROOT, absolute and clean.
    static QString sandboxRoot(const Settings &settings);
    // The same place for the workspace `name` beside this one (a session's), with its quota.
    Workspace sibling(const QString &directory) const;

    const QString &path() const { return m_path; }
    // Where this daemon keeps every workspace: this one's directory, beside which are the
    // sessions' and the named ones (one file system).
    QString storeDirectory() const;
    gid_t sandboxGid() const { return m_sandboxGid; }
    const WorkspaceOwner &owner() const { return m_owner; }
    // 0: no quota (a plain directory).
    qint64 quotaBytes() const { return m_quotaBytes; }

    // What the workspace holds now, as its quota counts it (btrfs qgroups: shared extents
    // included); nullopt when it is no subvolume of the workspace volume or this process cannot
    // read the quota tree (root only). The file system is synced first, so that the figure
    // includes what was written in the last seconds.
    std::optional<qint64> usedBytes() const;

    // Only root may give its files to another group; without root, files keep the daemon's
    // group (the jobs cannot switch uid then either).
    bool ownershipApplies() const;

    // Creates the directory (and SANDBOX_ROOT) when missing (a subvolume with its quota set when
    // quotaBytes() > 0; an existing one gets the quota of the settings now in force), setgid and
    // group-owned by the sandbox gid when ownershipApplies(). False with a reason when it cannot be
    // created or is not a directory.
    bool ensureExists(QString *error) const;

    // A tree whose top is not the owner's (written before workspaces had one owner, or restored
    // from a checkpoint of such a tree): what root and the pool's uids own in it becomes the
    // owner's, by descriptors (giveTreeTo). Cheap when the top is the owner's already: one open
    // and one stat. False, with a reason, when part of it could not be changed.
    bool takeOwnership(QString *error) const;

    // Gives a file or directory the tools just created to the workspace's owner and the sandbox
    // group, mode 0664 for files
    // and 2775 for directories (setgid, so that what jobs create below inherits the group). Does
    // nothing when ownershipApplies() is false. Never used on existing files: their owner's
    // choices stand.
    bool adoptCreated(int fd, bool isDirectory) const;

    // Removes the workspace at `path` and its checkpoints: a subvolume in one call however large
    // (the kernel frees its space afterwards), a plain tree by descriptors (jobs may have planted
    // links anywhere in it). Failures are logged.
    static void removeWithCheckpoints(const QString &path);

private:
    bool takeOwnership(int topFd, QString *error) const;

    QString m_path;
    gid_t m_sandboxGid = 0;
    qint64 m_quotaBytes = 0;
    WorkspaceOwner m_owner;
};

} // namespace cmcp
