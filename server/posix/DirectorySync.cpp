#include "posix/DirectorySync.h"

#include "posix/UniqueFd.h"

#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

bool fsyncDirectoryAt(int dirFd, const char *path)
{
    const UniqueFd directory(::openat(dirFd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    return directory.isValid() && ::fsync(directory.get()) == 0;
}

} // namespace cmcp
