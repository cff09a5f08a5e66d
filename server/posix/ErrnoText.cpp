#include "posix/ErrnoText.h"

#include <cstring>

namespace cmcp {

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

QString errnoName(int error)
{
    const char *name = strerrorname_np(error);
    return name ? QString::fromLatin1(name) : QStringLiteral("errno %1").arg(error);
}

} // namespace cmcp
