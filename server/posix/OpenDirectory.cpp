#include "posix/OpenDirectory.h"

#include <QFile>
#include <QStringList>

#include <cerrno>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#  define SYS_openat2 437 // glibc 2.36 has no wrapper
#endif

namespace cmcp {

UniqueFd openDirectory(const QString &path)
{
    return UniqueFd(::open(QFile::encodeName(path).constData(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

UniqueFd openDirectoryBeneath(int directoryFd, const QString &relative)
{
    const QStringList components = relative.split(QLatin1Char('/'));
    for (const QString &component : components) {
        if (component.isEmpty() || component == u"." || component == u"..") {
            errno = EINVAL;
            return {};
        }
    }
    UniqueFd current(::fcntl(directoryFd, F_DUPFD_CLOEXEC, 0));
    for (const QString &component : components) {
        if (!current.isValid())
            return {};
        current = UniqueFd(::openat(current.get(), QFile::encodeName(component).constData(),
                                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    return current;
}

int openDirectoryAt(int dirFd, const QByteArray &name)
{
    open_how how{};
    how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
    how.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    if (name != "..")
        how.resolve |= RESOLVE_BENEATH;
    const long fd = ::syscall(SYS_openat2, dirFd, name.constData(), &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
        return int(fd);
    return ::openat(dirFd, name.constData(), int(how.flags));
}

} // namespace cmcp
