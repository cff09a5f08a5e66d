#pragma once

#include <QString>

#include <sys/types.h>

#include <optional>

namespace cmcp {

// A directory above the workspace that a job's uid cannot search (no execute bit for it).
struct ClosedDirectory
{
    QString path;
    mode_t mode = 0; // the permission bits
    uid_t owner = 0;
    gid_t group = 0;
};

// Whether jobs running as `uid`/`gid` (no supplementary groups) can pass through every
// directory above `workspace` to reach it by its host path. They must where a job sees the
// host's root (no namespaces layer); inside the minimal root the jail opens the workspace while
// it is still privileged and no job passes through these directories. The first directory from
// "/" down that the mode bits close to them; none when all are open (ACLs are not read: they
// can only open more). The path is resolved first, so symbolic links count by their targets.
std::optional<ClosedDirectory> firstClosedDirectory(const QString &workspace, uid_t uid, gid_t gid);

// One line for the refusal: the directory, its mode and owner, why jobs need it and the fix.
QString closedDirectoryRefusal(const QString &workspace, const ClosedDirectory &closed, uid_t uid);

} // namespace cmcp
