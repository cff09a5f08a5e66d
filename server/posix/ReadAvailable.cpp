#include "posix/ReadAvailable.h"

#include <cerrno>

#include <unistd.h>

namespace cmcp {

ReadEnd readAvailable(int fd, const std::function<void(const char *data, std::size_t size)> &sink)
{
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            sink(buffer, std::size_t(n));
            continue;
        }
        if (n == 0)
            return ReadEnd::EndOfFile;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? ReadEnd::WouldBlock : ReadEnd::Failed;
    }
}

} // namespace cmcp
