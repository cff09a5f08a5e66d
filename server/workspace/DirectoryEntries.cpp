#include "workspace/DirectoryEntries.h"

#include <algorithm>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

QList<DirectoryEntry> readDirectory(int dirFd, qsizetype maxEntries, bool *complete)
{
    QList<DirectoryEntry> entries;
    if (complete)
        *complete = true;
    // fdopendir takes the descriptor over; a copy leaves the caller's open.
    const int copy = ::openat(dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (copy < 0)
        return entries;
    DIR *dir = ::fdopendir(copy);
    if (!dir) {
        ::close(copy);
        return entries;
    }
    while (const dirent *entry = ::readdir(dir)) {
        if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0)
            continue;
        if (maxEntries >= 0 && entries.size() >= maxEntries) {
            if (complete)
                *complete = false;
            break;
        }
        DirectoryEntry found{QByteArray(entry->d_name), {}};
        if (::fstatat(dirFd, entry->d_name, &found.status, AT_SYMLINK_NOFOLLOW) == 0)
            entries.append(found);
    }
    ::closedir(dir);
    std::sort(entries.begin(), entries.end(),
              [](const DirectoryEntry &a, const DirectoryEntry &b) { return a.name < b.name; });
    return entries;
}

} // namespace cmcp
