#include "posix/OpenDirectory.h"

#include <QFile>

#include <fcntl.h>

namespace cmcp {

UniqueFd openDirectory(const QString &path)
{
    return UniqueFd(::open(QFile::encodeName(path).constData(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

} // namespace cmcp
