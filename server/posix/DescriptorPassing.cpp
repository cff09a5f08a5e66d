#include "posix/DescriptorPassing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace cmcp {

namespace {

// A one-byte message with room for one descriptor.
struct Message
{
    char tag = 'F';
    iovec iov{&tag, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};

    Message()
    {
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
    }
    Message(const Message &) = delete;
    Message &operator=(const Message &) = delete;
};

} // namespace

bool sendDescriptor(int channel, int fd)
{
    Message message;
    cmsghdr *cmsg = CMSG_FIRSTHDR(&message.msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    for (;;) {
        if (::sendmsg(channel, &message.msg, MSG_NOSIGNAL) == 1)
            return true;
        if (errno != EINTR)
            return false;
    }
}

UniqueFd receiveDescriptor(int channel, bool *ended)
{
    Message message;
    const ssize_t n = ::recvmsg(channel, &message.msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    *ended = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
    if (n <= 0)
        return UniqueFd();
    UniqueFd received;
    for (cmsghdr *cmsg = CMSG_FIRSTHDR(&message.msg); cmsg;
         cmsg = CMSG_NXTHDR(&message.msg, cmsg)) {
        if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
            continue;
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
        received = UniqueFd(fd);
    }
    return received;
}

} // namespace cmcp
