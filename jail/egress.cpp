// The job's one way out of its own network namespace: a listening TCP socket on its loopback,
// made here and handed to the supervisor, which accepts every connection on it outside the job
// (the daemon's egress gate decides each one). The job keeps no descriptor of it, so it can
// neither accept on it nor find any other route: its namespace has loopback alone.
#include "jail/layers.h"
#include "posix/DescriptorPassing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cmcp::jail {

bool handOverEgressListener(const Policy &policy, const Launch &launch, std::string &error)
{
    const std::uint16_t port = *policy.namespaces->egressPort;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = errnoText("socket for the egress listener", errno);
        return false;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = true;
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0
        || ::listen(fd, 64) != 0) {
        error = errnoText("listening on 127.0.0.1:" + std::to_string(port), errno);
        ok = false;
    }
    if (ok && !sendDescriptor(launch.egressFd, fd)) {
        error = errnoText("sending the egress listener to the supervisor", errno);
        ok = false;
    }
    ::close(fd);
    ::close(launch.egressFd);
    return ok;
}

} // namespace cmcp::jail
