#include "posix/DirectoryNames.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

QList<QByteArray> directoryNames(int dirFd, int *error)
{
    QList<QByteArray> names;
    *error = 0;
    // fdopendir takes the descriptor over; a copy leaves the caller's open.
    const int copy = ::openat(dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = copy >= 0 ? ::fdopendir(copy) : nullptr;
    if (!dir) {
        *error = errno;
        if (copy >= 0)
            ::close(copy);
        return names;
    }
    errno = 0;
    while (const dirent *entry = ::readdir(dir)) {
        if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0)
            names.append(QByteArray(entry->d_name));
        errno = 0;
    }
    *error = errno;
    ::closedir(dir);
    return names;
}

} // namespace cmcp
