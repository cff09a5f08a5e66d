#include "jail/sender_credentials.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cmcp::jail {

bool sendNamingProcess(int socket, char byte, pid_t pid)
{
    iovec iov{&byte, 1};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof(ucred));
    const ucred cred{pid, ::getuid(), ::getgid()};
    std::memcpy(CMSG_DATA(c), &cred, sizeof cred);
    return ::sendmsg(socket, &msg, MSG_NOSIGNAL) == 1;
}

ssize_t receiveWithSender(int socket, void *data, std::size_t size, pid_t &pid)
{
    iovec iov{data, size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    pid = 0;
    ssize_t n;
    do
        n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return n;
    for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
            ucred cred{};
            std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
            pid = cred.pid;
        }
    }
    return n;
}

} // namespace cmcp::jail
