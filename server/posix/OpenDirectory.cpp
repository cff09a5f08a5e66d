#include "posix/OpenDirectory.h"

#include <QFile>
#include <QStringList>

#include <cerrno>
#include <fcntl.h>

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

} // namespace cmcp
