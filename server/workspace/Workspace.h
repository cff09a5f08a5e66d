#pragma once

#include <QString>

#include <sys/types.h>

namespace cmcp {

class Settings;

// The directory the file tools and the jobs of the system tools share: <SANDBOX_ROOT>/workspace
// on the host, /workspace inside a jail. Jobs run as distinct uids of one pool that share one
// gid, so what either side creates must belong to that group and be group-writable for the
// other side to use it; ownershipApplies() says whether this process can arrange that.
class Workspace
{
public:
    Workspace() = default;
    Workspace(QString path, gid_t sandboxGid);

    // SANDBOX_ROOT made absolute against the current directory (once, at start-up, so that a
    // later chdir cannot move it), and the pool's gid (SANDBOX_GID, 0 meaning SANDBOX_UID_BASE).
    static Workspace fromSettings(const Settings &settings);

    const QString &path() const { return m_path; }
    gid_t sandboxGid() const { return m_sandboxGid; }

    // Only root may give its files to another group; without root, files keep the daemon's
    // group (the jobs cannot switch uid then either).
    bool ownershipApplies() const;

    // Creates the directory (and SANDBOX_ROOT) when missing, setgid and group-owned by the
    // sandbox gid when ownershipApplies(). False with a reason when it cannot be created or is
    // not a directory.
    bool ensureExists(QString *error) const;

    // Gives a file or directory the tools just created to the sandbox group, mode 0664 for files
    // and 2775 for directories (setgid, so that what jobs create below inherits the group). Does
    // nothing when ownershipApplies() is false. Never used on existing files: their owner's
    // choices stand.
    bool adoptCreated(int fd, bool isDirectory) const;

private:
    QString m_path;
    gid_t m_sandboxGid = 0;
};

} // namespace cmcp
