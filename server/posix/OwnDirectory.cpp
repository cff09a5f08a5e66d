#include "posix/OwnDirectory.h"

#include "posix/ErrnoText.h"

#include <QDir>
#include <QFile>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

UniqueFd openOwnDirectoryAt(int parentFd, const QByteArray &name, mode_t mode,
                            const QString &shownPath, QString *error)
{
    if (::mkdirat(parentFd, name.constData(), mode) != 0 && errno != EEXIST) {
        *error = QStringLiteral("cannot create %1: %2").arg(shownPath, errnoText(errno));
        return {};
    }
    UniqueFd directory(
            ::openat(parentFd, name.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!directory.isValid()) {
        struct stat entry = {};
        const int openError = errno;
        if (::fstatat(parentFd, name.constData(), &entry, AT_SYMLINK_NOFOLLOW) == 0
            && S_ISLNK(entry.st_mode))
            *error = QStringLiteral("%1 is a symbolic link: refused, cmcpd keeps a directory of "
                                    "its own there and follows no link to it (remove the link)")
                             .arg(shownPath);
        else if (openError == ENOTDIR)
            *error = QStringLiteral("%1 is not a directory: refused (remove it)").arg(shownPath);
        else
            *error = QStringLiteral("cannot open %1: %2").arg(shownPath, errnoText(openError));
        return {};
    }
    struct stat status = {};
    if (::fstat(directory.get(), &status) != 0) {
        *error = QStringLiteral("cannot examine %1: %2").arg(shownPath, errnoText(errno));
        return {};
    }
    if (status.st_uid != ::geteuid()) {
        *error = QStringLiteral("%1 belongs to uid %2, not to cmcpd's uid %3: refused, cmcpd "
                                "empties and restricts only a directory of its own (remove it)")
                         .arg(shownPath)
                         .arg(status.st_uid)
                         .arg(::geteuid());
        return {};
    }
    if ((status.st_mode & 07777) != mode && ::fchmod(directory.get(), mode) != 0) {
        *error = QStringLiteral("cannot set the mode of %1 to %2: %3")
                         .arg(shownPath, QString::number(mode, 8), errnoText(errno));
        return {};
    }
    return directory;
}

UniqueFd openOwnDirectory(const QString &path, mode_t mode, QString *error)
{
    const QString clean = QDir::cleanPath(path);
    const qsizetype slash = clean.lastIndexOf(QLatin1Char('/'));
    if (!clean.startsWith(QLatin1Char('/')) || slash == 0) {
        *error = QStringLiteral("cannot make %1: not an absolute path below a directory").arg(path);
        return {};
    }
    const QString parent = clean.left(slash);
    if (!QDir().mkpath(parent)) {
        *error = QStringLiteral("cannot create %1").arg(parent);
        return {};
    }
    const UniqueFd parentFd(
            ::open(QFile::encodeName(parent).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parentFd.isValid()) {
        *error = QStringLiteral("cannot open %1: %2").arg(parent, errnoText(errno));
        return {};
    }
    return openOwnDirectoryAt(parentFd.get(), QFile::encodeName(clean.mid(slash + 1)), mode, clean,
                              error);
}

} // namespace cmcp
