#include "posix/Pipe.h"

#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

std::optional<PipePair> openPipe()
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return std::nullopt;
    return PipePair{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

} // namespace cmcp
