#include "console/AdminClient.h"

#include <QFileInfo>
#include <QLocalSocket>

#include <utility>

namespace cmcp {

using admin::Message;
using admin::MessageType;

AdminClient::AdminClient(QObject *parent) : QObject(parent)
{
    m_reconnect.setInterval(1000);
    m_reconnect.setSingleShot(true);
    connect(&m_reconnect, &QTimer::timeout, this, &AdminClient::tryConnect);
}

AdminClient::~AdminClient()
{
    m_closing = true;
    if (m_socket)
        m_socket->abort();
}

void AdminClient::open(const QString &socketPath)
{
    // QLocalSocket looks for names that do not start with '/' in the temporary directory.
    m_path = QFileInfo(socketPath).absoluteFilePath();
    m_closing = false;
    tryConnect();
}

void AdminClient::close()
{
    m_closing = true;
    m_reconnect.stop();
    if (m_socket)
        m_socket->abort();
    lost(QStringLiteral("closed"));
}

void AdminClient::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void AdminClient::tryConnect()
{
    if (m_closing || m_state != State::Disconnected)
        return;
    if (m_socket) {
        // The old socket's late signals must not reach the handlers of the new one.
        m_socket->disconnect(this);
        m_socket->deleteLater();
    }
    m_socket = new QLocalSocket(this);
    m_splitter = admin::LineSplitter();
    connect(m_socket, &QLocalSocket::connected, this, [this] {
        m_socket->write(admin::encode(
                Message::hello(QStringLiteral("cmcp-console"), QStringLiteral(CMCP_VERSION))));
    });
    connect(m_socket, &QLocalSocket::readyRead, this, &AdminClient::readLines);
    connect(m_socket, &QLocalSocket::disconnected, this, [this] {
        lost(m_lastError.isEmpty() ? QStringLiteral("the daemon closed the connection")
                                   : m_lastError);
    });
    connect(m_socket, &QLocalSocket::errorOccurred, this, [this](QLocalSocket::LocalSocketError) {
        if (m_socket->state() != QLocalSocket::ConnectedState)
            lost(m_socket->errorString());
    });
    setState(State::Connecting);
    m_lastError.clear();
    m_socket->connectToServer(m_path);
}

void AdminClient::lost(const QString &why)
{
    if (m_state == State::Disconnected)
        return;
    m_lastError = why;
    const QHash<qint64, ReplyHandler> pending = std::exchange(m_pending, {});
    setState(State::Disconnected);
    for (const ReplyHandler &handler : pending) {
        if (handler)
            handler({}, QStringLiteral("disconnected"), why);
    }
    if (!m_closing)
        m_reconnect.start();
}

qint64 AdminClient::request(const QString &method, const QJsonObject &params, ReplyHandler handler)
{
    const qint64 id = m_nextId++;
    if (m_state != State::Connected) {
        if (handler)
            handler({}, QStringLiteral("disconnected"),
                    QStringLiteral("not connected to the daemon"));
        return id;
    }
    m_pending.insert(id, std::move(handler));
    m_socket->write(admin::encode(Message::request(id, method, params)));
    return id;
}

void AdminClient::readLines()
{
    const QList<admin::LineSplitter::Line> lines = m_splitter.feed(m_socket->readAll());
    for (const admin::LineSplitter::Line &line : lines) {
        if (line.oversized) {
            Q_EMIT errorReceived(QLatin1String(admin::errorOversized),
                                 QStringLiteral("the daemon sent a line longer than %1 bytes")
                                         .arg(admin::maxLineBytes));
            continue;
        }
        QString problem;
        const std::optional<Message> message = admin::decode(line.bytes, &problem);
        if (!message) {
            Q_EMIT errorReceived(QLatin1String(admin::errorMalformed), problem);
            continue;
        }
        handle(*message);
        if (m_state == State::Disconnected)
            return;
    }
}

void AdminClient::handle(const Message &message)
{
    switch (message.type) {
    case MessageType::Hello:
        if (const QString refusal = admin::checkHello(message); !refusal.isEmpty()) {
            m_lastError = QStringLiteral("the daemon speaks another protocol: ") + refusal;
            m_socket->abort();
            lost(m_lastError);
            return;
        }
        m_serverVersion = message.programVersion;
        setState(State::Connected);
        Q_EMIT connected();
        return;
    case MessageType::Event:
        Q_EMIT eventReceived(message.name, message.body);
        return;
    case MessageType::Reply:
    case MessageType::Error:
        if (message.id) {
            const ReplyHandler handler = m_pending.take(*message.id);
            if (handler) {
                if (message.type == MessageType::Reply)
                    handler(message.body, {}, {});
                else
                    handler({}, message.errorCode, message.errorMessage);
                return;
            }
        }
        if (message.type == MessageType::Error) {
            m_lastError = message.errorMessage;
            Q_EMIT errorReceived(message.errorCode, message.errorMessage);
        }
        return;
    case MessageType::Request:
        return; // the daemon sends none
    }
}

} // namespace cmcp
