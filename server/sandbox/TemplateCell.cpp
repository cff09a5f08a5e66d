#include "sandbox/TemplateCell.h"

#include "posix/DescriptorPassing.h"
#include "posix/ErrnoText.h"
#include "posix/WriteAll.h"

#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <sys/socket.h>

namespace cmcp {

namespace cells = cell_protocol;

TemplateCell::TemplateCell(quint32 id, UniqueFd socket, QObject *parent)
    : QObject(parent),
      m_id(id),
      m_socket(std::move(socket))
{
    m_notifier = new QSocketNotifier(m_socket.get(), QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &TemplateCell::readMessages);
}

TemplateCell::~TemplateCell()
{
    // Before the descriptor closes: the dispatcher still watches it.
    delete m_notifier;
}

bool TemplateCell::startCall(uid_t uid, const QByteArray &payload, int output, int error,
                             int channel, QString *why)
{
    if (!m_socket.isValid()) {
        *why = QStringLiteral("the template's cell is gone");
        return false;
    }
    if (quint64(payload.size()) > cells::kPayloadMax) {
        *why = QStringLiteral("the call is larger than %1 MiB").arg(cells::kPayloadMax >> 20);
        return false;
    }
    cells::CallRequest request;
    request.uid = uid;
    request.payloadBytes = std::uint32_t(payload.size());
    std::vector<int> fds{output, error};
    if (channel >= 0) {
        request.flags |= cells::kHasChannel;
        fds.push_back(channel);
    }
    QByteArray message(reinterpret_cast<const char *>(&request), sizeof request);
    UniqueFd memfd;
    if (quint64(payload.size()) > cells::kInlinePayloadMax) {
        memfd.reset(::memfd_create("cmcp-call", MFD_CLOEXEC));
        if (!memfd.isValid()
            || writeAll(memfd.get(), payload.constData(), std::size_t(payload.size()))
                    != std::size_t(payload.size())) {
            *why = QStringLiteral("memfd for the call: ") + errnoText(errno);
            return false;
        }
        request.flags |= cells::kPayloadInMemfd;
        std::memcpy(message.data(), &request, sizeof request);
        fds.push_back(memfd.get());
    } else {
        message.append(payload);
    }
    // The cell reads one call at a time and has none: the message goes into an empty buffer.
    if (!sendWithFds(m_socket.get(), message.constData(), std::size_t(message.size()), fds)) {
        *why = QStringLiteral("handing the call to the template's cell: ") + errnoText(errno);
        return false;
    }
    return true;
}

bool TemplateCell::arm(UidLease lease, UniqueFd workspaceView)
{
    cells::ArmRequest request;
    request.uid = lease.uid();
    std::vector<int> fds;
    if (workspaceView.isValid()) {
        request.flags |= cells::ArmRequest::kHasWorkspaceView;
        fds.push_back(workspaceView.get());
    }
    // The cell reads one arm at a time and waits for it: the message goes into an empty buffer.
    if (!m_socket.isValid() || !sendWithFds(m_socket.get(), &request, sizeof request, fds))
        return false;
    m_lease = std::move(lease);
    m_armedWithWorkspaceView = workspaceView.isValid();
    return true;
}

void TemplateCell::killCall()
{
    if (m_socket.isValid())
        (void)!::send(m_socket.get(), &cells::kKillCall, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void TemplateCell::readMessages()
{
    for (;;) {
        char message[sizeof(cells::CallFailure) + 65536];
        const ssize_t n = ::recv(m_socket.get(), message, sizeof message, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0) {
            close();
            return;
        }
        if (message[0] == cells::CallFailure::kFailed && n >= ssize_t(sizeof(cells::CallFailure))) {
            cells::CallFailure failure;
            std::memcpy(&failure, message, sizeof failure);
            const QString text = QString::fromUtf8(message + sizeof failure,
                                                   qsizetype(n) - qsizetype(sizeof failure));
            const qsizetype newline = text.indexOf(QLatin1Char('\n'));
            Q_EMIT callRefused(failure.code,
                               newline < 0 ? QStringLiteral("exec") : text.left(newline),
                               newline < 0 ? text : text.mid(newline + 1));
        } else if (message[0] == cells::kArmFailed) {
            const QString text = QString::fromUtf8(message + 1, qsizetype(n) - 1)
                                         .replace(QLatin1Char('\n'), QStringLiteral(": "));
            Q_EMIT armFailed(text);
        } else if (message[0] == cells::kDenials) {
            std::vector<SeccompDenial> denials;
            qint64 unnamed = 0;
            const QByteArray text(message + 1, qsizetype(n) - 1);
            for (const QByteArray &line : text.split('\n')) {
                const QList<QByteArray> fields = line.split(' ');
                if (fields.size() != 3)
                    continue;
                if (fields[0] == "-")
                    unnamed = fields[2].toLongLong();
                else
                    denials.push_back({fields[0].toStdString(), fields[1].toStdString(),
                                       fields[2].toLongLong()});
            }
            Q_EMIT callDenied(denials, unnamed);
        } else if (message[0] == cells::CallEnd::kEnded && n == ssize_t(sizeof(cells::CallEnd))) {
            cells::CallEnd end;
            std::memcpy(&end, message, sizeof end);
            Q_EMIT callEnded(end);
        }
        if (!m_socket.isValid())
            return; // a slot closed it
    }
}

void TemplateCell::close()
{
    if (!m_socket.isValid())
        return;
    delete m_notifier;
    m_notifier = nullptr;
    m_socket.reset();
    Q_EMIT gone();
}

} // namespace cmcp
