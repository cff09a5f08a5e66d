#include "posix/WriteAll.h"

#include <cerrno>
#include <unistd.h>

namespace cmcp {

std::size_t writeAll(int fd, const void *data, std::size_t size)
{
    const char *bytes = static_cast<const char *>(data);
    std::size_t written = 0;
    while (written < size) {
        const ssize_t n = ::write(fd, bytes + written, size - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            // write(2) returns 0 only when the file cannot take more (a full device).
            if (n == 0)
                errno = ENOSPC;
            break;
        }
        written += std::size_t(n);
    }
    return written;
}

} // namespace cmcp
