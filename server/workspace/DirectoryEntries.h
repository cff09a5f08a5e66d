#pragma once

#include <QByteArray>
#include <QList>

#include <sys/stat.h>

namespace cmcp {

struct DirectoryEntry
{
    QByteArray name;
    struct stat status; // of the name itself: a symbolic link is described, not followed
};

// The entries of an open directory sorted by name, "." and ".." left out. Walks that descend
// open each subdirectory by its name relative to `dirFd` with O_NOFOLLOW, so they stay inside
// whatever the names are. With `maxEntries` (>= 0) reading stops after that many, and `complete`
// says whether it did.
QList<DirectoryEntry> readDirectory(int dirFd, qsizetype maxEntries = -1, bool *complete = nullptr);

} // namespace cmcp
