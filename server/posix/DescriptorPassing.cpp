#include "posix/DescriptorPassing.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cmcp {

namespace {

constexpr std::size_t kMostFds = 8;

} // namespace

bool sendWithFds(int socket, const void *data, std::size_t size, const std::vector<int> &fds)
{
    if (fds.size() > kMostFds) {
        errno = EINVAL;
        return false;
    }
    iovec iov{const_cast<void *>(data), size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMostFds)] = {};
    if (!fds.empty()) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    ssize_t n;
    do
        n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(size);
}

ssize_t receiveWithFds(int socket, void *data, std::size_t size, std::vector<int> &fds,
                       std::size_t maxFds, int flags)
{
    iovec iov{data, size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMostFds)] = {};
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * std::min(maxFds, kMostFds));
    ssize_t n;
    do
        n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | flags);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return n;
    for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            fds.push_back(fd);
        }
    }
    if (msg.msg_flags & MSG_CTRUNC) {
        closeAll(fds);
        errno = EMSGSIZE;
        return -1;
    }
    return n;
}

void closeAll(std::vector<int> &fds)
{
    for (int fd : fds)
        if (fd >= 0)
            ::close(fd);
    fds.clear();
}

bool sendDescriptor(int channel, int fd)
{
    const char tag = 'F';
    return sendWithFds(channel, &tag, 1, {fd});
}

UniqueFd receiveDescriptor(int channel, bool *ended)
{
    char tag = 0;
    std::vector<int> fds;
    const ssize_t n = receiveWithFds(channel, &tag, 1, fds, 1, MSG_DONTWAIT);
    *ended = n == 0 || (n < 0 && errno != EAGAIN);
    if (n <= 0 || fds.empty())
        return UniqueFd();
    return UniqueFd(fds.front());
}

} // namespace cmcp
