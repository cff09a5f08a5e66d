#include "posix/Pipe.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cmcp {

std::optional<PipePair> openPipe()
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return std::nullopt;
    return PipePair{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

bool moveAboveStdio(UniqueFd &fd)
{
    if (fd.get() > 2)
        return true;
    UniqueFd moved(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
    if (!moved.isValid())
        return false;
    fd = std::move(moved);
    return true;
}

std::optional<PipePair> openPipeAboveStdio()
{
    std::optional<PipePair> pipe = openPipe();
    if (!pipe || !moveAboveStdio(pipe->read) || !moveAboveStdio(pipe->write))
        return std::nullopt;
    return pipe;
}

std::optional<PipePair> openSocketPairAboveStdio()
{
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0)
        return std::nullopt;
    PipePair pair{UniqueFd(ends[0]), UniqueFd(ends[1])};
    if (!moveAboveStdio(pair.read) || !moveAboveStdio(pair.write))
        return std::nullopt;
    return pair;
}

} // namespace cmcp
