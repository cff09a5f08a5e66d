#include "sandbox/TemplateConnection.h"

#include "jail/protocol/CellProtocol.h"
#include "posix/DescriptorPassing.h"
#include "posix/ErrnoText.h"
#include "sandbox/TemplateCell.h"

#include <QFile>
#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>

namespace cmcp {

namespace cells = cell_protocol;

TemplateConnection::TemplateConnection(QObject *parent) : QObject(parent) { }

TemplateConnection::~TemplateConnection()
{
    delete m_notifier;
}

bool TemplateConnection::connectTo(const QString &socketPath, QString *error)
{
    const QByteArray path = QFile::encodeName(socketPath);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (qsizetype(sizeof address.sun_path) <= path.size()) {
        *error = QStringLiteral("the template's socket path is too long: ") + socketPath;
        return false;
    }
    std::memcpy(address.sun_path, path.constData(), std::size_t(path.size()) + 1);
    UniqueFd socket(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!socket.isValid()
        || ::connect(socket.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address)
                != 0) {
        *error = QStringLiteral("connecting to the template at %1: %2")
                         .arg(socketPath, errnoText(errno));
        return false;
    }
    m_socket = std::move(socket);
    m_notifier = new QSocketNotifier(m_socket.get(), QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &TemplateConnection::readMessages);
    return true;
}

void TemplateConnection::send(char kind, quint32 cell)
{
    if (!m_socket.isValid())
        return;
    cells::ControlRequest request;
    request.kind = kind;
    request.cell = cell;
    (void)!::send(m_socket.get(), &request, sizeof request, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void TemplateConnection::requestCell()
{
    send(cells::kMakeCell, 0);
}

void TemplateConnection::killCell(quint32 id)
{
    send(cells::kKillCell, id);
}

void TemplateConnection::readMessages()
{
    for (;;) {
        char message[sizeof(cells::ControlReply) + 4096];
        std::vector<int> fds;
        const ssize_t n =
                receiveWithFds(m_socket.get(), message, sizeof message, fds, 1, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n < ssize_t(sizeof(cells::ControlReply))) {
            closeAll(fds);
            if (n <= 0) {
                close();
                return;
            }
            continue;
        }
        cells::ControlReply reply;
        std::memcpy(&reply, message, sizeof reply);
        const QString text =
                QString::fromUtf8(message + sizeof reply, qsizetype(n) - qsizetype(sizeof reply));
        if (reply.kind == cells::kCellCgroups) {
            Q_EMIT cellCgroups(reply.cell, text.split(QLatin1Char('\n'), Qt::SkipEmptyParts));
        } else if (reply.kind == cells::kCellReady && fds.size() == 1) {
            UniqueFd socket(fds.front());
            fds.clear();
            Q_EMIT cellReady(new TemplateCell(reply.cell, std::move(socket)));
        } else if (reply.kind == cells::kCellFailed) {
            Q_EMIT cellFailed(text);
        } else if (reply.kind == cells::kCellGone) {
            Q_EMIT cellGone(reply.cell);
        }
        closeAll(fds);
        if (!m_socket.isValid())
            return;
    }
}

void TemplateConnection::close()
{
    if (!m_socket.isValid())
        return;
    delete m_notifier;
    m_notifier = nullptr;
    m_socket.reset();
    Q_EMIT closed();
}

} // namespace cmcp
