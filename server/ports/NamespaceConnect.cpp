#include "ports/NamespaceConnect.h"

#include "posix/ErrnoText.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QPointer>

#include <memory>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace cmcp {

namespace {

// A loopback connect answers at once unless the server's accept queue is full; then it waits
// this long at most.
constexpr int kConnectTimeoutSeconds = 5;

struct Outcome
{
    UniqueFd socket;
    QString error;
};

// On the worker thread, which is in `netns` once this returns successfully.
Outcome connectThere(int netns, quint16 port)
{
    Outcome outcome;
    if (::setns(netns, CLONE_NEWNET) != 0) {
        outcome.error = QStringLiteral("cannot enter the job's network namespace: %1")
                                .arg(errnoText(errno));
        return outcome;
    }
    UniqueFd socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket.isValid()) {
        outcome.error = QStringLiteral("socket: %1").arg(errnoText(errno));
        return outcome;
    }
    const timeval timeout{kConnectTimeoutSeconds, 0};
    ::setsockopt(socket.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(socket.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address)
        != 0) {
        const int error = errno;
        outcome.error = error == ECONNREFUSED
                ? QStringLiteral("nothing listens on 127.0.0.1:%1 in the job").arg(port)
                : QStringLiteral("connecting to 127.0.0.1:%1 in the job: %2")
                          .arg(port)
                          .arg(errnoText(error));
        return outcome;
    }
    const timeval none{0, 0};
    ::setsockopt(socket.get(), SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
    const int on = 1;
    ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ::fcntl(socket.get(), F_SETFL, ::fcntl(socket.get(), F_GETFL) | O_NONBLOCK);
    outcome.socket = std::move(socket);
    return outcome;
}

} // namespace

void connectInNamespace(int netns, quint16 port, QObject *context,
                        std::function<void(UniqueFd socket, const QString &error)> done)
{
    // The thread holds a namespace descriptor of its own: the port may be revoked (and its
    // descriptor closed) while the thread runs.
    auto entered = std::make_shared<UniqueFd>(::fcntl(netns, F_DUPFD_CLOEXEC, 0));
    if (!entered->isValid()) {
        done(UniqueFd(), QStringLiteral("dup: %1").arg(errnoText(errno)));
        return;
    }
    QPointer<QObject> guard(context);
    std::thread([entered, port, guard, done = std::move(done)]() mutable {
        auto outcome = std::make_shared<Outcome>(connectThere(entered->get(), port));
        entered->reset();
        // Queued to the application's thread, where the context lives and is looked at: when it
        // is gone by then, the socket closes with `outcome`.
        QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [guard, outcome, done = std::move(done)] {
                    if (guard)
                        done(std::move(outcome->socket), outcome->error);
                },
                Qt::QueuedConnection);
    }).detach();
}

} // namespace cmcp
