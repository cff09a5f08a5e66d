#include "admin/AdminPeer.h"

#include "common/AdminSnapshotRecords.h"

#include <QLocalSocket>

#include <spdlog/spdlog.h>

namespace cmcp {

using admin::Message;
using admin::MessageType;

AdminPeer::AdminPeer(QLocalSocket *socket, const QString &description, QObject *parent)
    : QObject(parent),
      m_socket(socket),
      m_description(description)
{
    socket->setParent(this);
    connect(socket, &QLocalSocket::readyRead, this, &AdminPeer::readLines);
    connect(socket, &QLocalSocket::bytesWritten, this, &AdminPeer::reportDropped);
    connect(socket, &QLocalSocket::disconnected, this, [this] { Q_EMIT gone(this); });
    send(Message::hello(QStringLiteral("cmcpd"), QStringLiteral(CMCP_VERSION)));
}

AdminPeer::~AdminPeer() = default;

void AdminPeer::write(const QByteArray &bytes)
{
    if (!m_socket || m_socket->state() != QLocalSocket::ConnectedState)
        return;
    if (m_socket->bytesToWrite() + bytes.size() > hardLimit) {
        spdlog::warn("admin: {} reads too slowly ({} bytes unsent): disconnected",
                     m_description.toStdString(), m_socket->bytesToWrite());
        m_socket->abort();
        return;
    }
    m_socket->write(bytes);
}

void AdminPeer::send(const Message &message)
{
    write(admin::encode(message));
}

void AdminPeer::sendEvent(const Message &message)
{
    if (!m_greeted || !m_socket)
        return;
    if (m_droppedPending > 0 || m_socket->bytesToWrite() > softLimit) {
        ++m_droppedPending;
        ++m_droppedTotal;
        return;
    }
    write(admin::encode(message));
}

// Once the queue has drained to half the soft limit, the console learns what it missed (and
// should ask for a snapshot), before any newer event.
void AdminPeer::reportDropped()
{
    if (m_droppedPending == 0 || !m_socket || m_socket->bytesToWrite() > softLimit / 2)
        return;
    const quint64 count = m_droppedPending;
    m_droppedPending = 0;
    const admin::DroppedEvent dropped{qint64(count), qint64(m_droppedTotal)};
    write(admin::encode(
            Message::event(QLatin1String(admin::DroppedEvent::event), dropped.toJson())));
}

void AdminPeer::disconnectWithError(const QString &code, const QString &message)
{
    send(Message::error(std::nullopt, code, message));
    if (m_socket)
        m_socket->disconnectFromServer();
}

void AdminPeer::readLines()
{
    if (!m_socket)
        return;
    const QList<admin::LineSplitter::Line> lines = m_splitter.feed(m_socket->readAll());
    for (const admin::LineSplitter::Line &line : lines) {
        if (!m_socket || m_socket->state() != QLocalSocket::ConnectedState)
            return;
        handleLine(line);
    }
}

void AdminPeer::handleLine(const admin::LineSplitter::Line &line)
{
    if (line.oversized) {
        send(Message::error(
                std::nullopt, QLatin1String(admin::errorOversized),
                QStringLiteral("line longer than %1 bytes skipped").arg(admin::maxLineBytes)));
        return;
    }
    QString problem;
    std::optional<qint64> id;
    const std::optional<Message> message = admin::decode(line.bytes, &problem, &id);
    if (!message) {
        send(Message::error(id, QLatin1String(admin::errorMalformed), problem));
        return;
    }
    if (message->type == MessageType::Hello) {
        if (const QString refusal = admin::checkHello(*message); !refusal.isEmpty()) {
            spdlog::warn("admin: {}: {}", m_description.toStdString(), refusal.toStdString());
            disconnectWithError(QLatin1String(admin::errorVersion), refusal);
            return;
        }
        m_greeted = true;
        return;
    }
    if (message->type != MessageType::Request) {
        send(Message::error(message->id, QLatin1String(admin::errorMalformed),
                            QStringLiteral("the daemon accepts only hello and request messages")));
        return;
    }
    if (!m_greeted) {
        send(Message::error(message->id, QLatin1String(admin::errorMalformed),
                            QStringLiteral("send a hello first")));
        return;
    }
    Q_EMIT requestReceived(this, *message);
}

} // namespace cmcp
