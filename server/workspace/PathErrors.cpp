#include "workspace/PathErrors.h"

#include "posix/ErrnoText.h"

#include <cerrno>
#include <sys/stat.h>

namespace cmcp {

QString describePathError(int error)
{
    switch (error) {
    case EXDEV:
        return QStringLiteral("path escapes the workspace (a symbolic link or '..' leads outside)");
    case ELOOP:
        return QStringLiteral("a symbolic link on the path may not be followed (it loops, is a "
                              "/proc magic link, or this operation does not follow links)");
    case ENOENT:
        return QStringLiteral("no such file or directory");
    case ENOTDIR:
        return QStringLiteral("a component of the path is not a directory");
    case EISDIR:
        return QStringLiteral("is a directory");
    case EACCES:
    case EPERM:
        return QStringLiteral("permission denied");
    case ENAMETOOLONG:
        return QStringLiteral("name too long");
    case EEXIST:
        return QStringLiteral("already exists");
    case ENOTEMPTY:
        return QStringLiteral("directory is not empty");
    case ENOSPC:
        return QStringLiteral("no space left on the workspace's file system");
    case EDQUOT:
        return QStringLiteral("disk quota exceeded: the workspace holds as much as "
                              "SANDBOX_WORKSPACE_QUOTA_MB allows");
    case EAGAIN:
        return QStringLiteral("the path kept changing during the lookup; try again");
    case EINVAL:
        return QStringLiteral("invalid operation (for example, moving a directory into itself)");
    default:
        return errnoText(error);
    }
}

QString describeFileType(mode_t mode)
{
    if (S_ISDIR(mode))
        return QStringLiteral("a directory");
    if (S_ISFIFO(mode))
        return QStringLiteral("a FIFO (named pipe)");
    if (S_ISSOCK(mode))
        return QStringLiteral("a socket");
    if (S_ISCHR(mode))
        return QStringLiteral("a character device");
    if (S_ISBLK(mode))
        return QStringLiteral("a block device");
    if (S_ISLNK(mode))
        return QStringLiteral("a symbolic link");
    if (S_ISREG(mode))
        return QStringLiteral("a regular file");
    return QStringLiteral("not a regular file");
}

} // namespace cmcp
