#pragma once

#include <QByteArray>
#include <QTest>

#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

// What a peer running as another user met on the admin socket.
enum PeerOutcome { Refused = 0, ConnectDenied = 10, Greeted = 20, Unexpected = 30 };

// Forks a child that drops to uid/gid/groups, connects to the admin socket at `path` and reads
// its first line; returns the PeerOutcome (or -1 when the child did not end in time). This
// thread's event loop runs meanwhile, for a server that accepts on it. Only async-signal-safe
// calls in the child: the test process has threads.
inline int connectAsOtherUser(const QByteArray &path, uid_t uid, gid_t gid,
                              const std::vector<gid_t> &groups = {})
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.constData(),
                std::min<size_t>(path.size(), sizeof address.sun_path - 1));
    const pid_t child = ::fork();
    if (child == 0) {
        if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(gid) != 0
            || ::setuid(uid) != 0)
            ::_exit(Unexpected);
        ::alarm(10);
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0)
            ::_exit(errno == EACCES ? ConnectDenied : Unexpected);
        char buffer[4096];
        size_t total = 0;
        while (total < sizeof buffer - 1) {
            const ssize_t n = ::read(fd, buffer + total, sizeof buffer - 1 - total);
            if (n <= 0)
                break;
            total += size_t(n);
            if (std::memchr(buffer, '\n', total))
                break;
        }
        buffer[total] = '\0';
        if (std::strstr(buffer, "\"hello\""))
            ::_exit(Greeted);
        // Refused: an error line, then the server hangs up.
        if (std::strstr(buffer, "\"refused\"") && ::read(fd, buffer, sizeof buffer) == 0)
            ::_exit(Refused);
        ::_exit(Unexpected);
    }
    int status = 0;
    if (!QTest::qWaitFor([&] { return ::waitpid(child, &status, WNOHANG) == child; }, 15000)) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
