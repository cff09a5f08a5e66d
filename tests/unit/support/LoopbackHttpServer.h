// A small HTTP/1.1 server on a loopback address for the web unit tests: each request is answered
// by a handler the test sets, every request is recorded (address it arrived at, Host header,
// path), and answers can be slow or endless, so that limits can be shown to hold.
#pragma once

#include <QHostAddress>
#include <QList>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <functional>
#include <memory>

struct RecordedRequest
{
    QHostAddress localAddress;
    QByteArray method;
    QByteArray path;
    QByteArray host;
    QByteArray head; // the whole request head
};

// What the handler writes: a complete answer at once, or chunks over time.
class HttpExchange
{
public:
    explicit HttpExchange(QTcpSocket *socket) : m_socket(socket) { }

    void respond(int status, const QByteArray &body, const QByteArray &contentType = "text/html",
                 const QList<QPair<QByteArray, QByteArray>> &headers = {})
    {
        QByteArray head = "HTTP/1.1 " + QByteArray::number(status) + " X\r\n";
        head += "Content-Type: " + contentType + "\r\nContent-Length: "
                + QByteArray::number(body.size()) + "\r\nConnection: close\r\n";
        for (const auto &[name, value] : headers)
            head += name + ": " + value + "\r\n";
        write(head + "\r\n" + body);
        close();
    }
    void redirect(int status, const QByteArray &location)
    {
        respond(status, "moved", "text/plain", {{"Location", location}});
    }
    void write(const QByteArray &bytes)
    {
        if (m_socket)
            m_socket->write(bytes);
    }
    void close()
    {
        if (m_socket)
            m_socket->disconnectFromHost();
    }
    bool connected() const
    {
        return m_socket && m_socket->state() == QAbstractSocket::ConnectedState;
    }
    // Writes `chunk` every `intervalMs` until `count` chunks are out (0: forever) or the client
    // goes away; then closes.
    void drip(const QByteArray &chunk, int intervalMs, int count,
              std::shared_ptr<qint64> written = {})
    {
        auto *timer = new QTimer(m_socket);
        auto sent = std::make_shared<int>(0);
        QPointer<QTcpSocket> socket = m_socket;
        QObject::connect(timer, &QTimer::timeout, timer, [=] {
            if (!socket || socket->state() != QAbstractSocket::ConnectedState) {
                timer->stop();
                return;
            }
            // Backpressure: a client that stopped reading stops the drip too.
            if (socket->bytesToWrite() > 4 * 1024 * 1024)
                return;
            socket->write(chunk);
            if (written)
                *written += chunk.size();
            if (count && ++*sent >= count) {
                timer->stop();
                socket->disconnectFromHost();
            }
        });
        timer->start(intervalMs);
    }

private:
    QPointer<QTcpSocket> m_socket;
};

class LoopbackHttpServer : public QObject
{
public:
    using Handler = std::function<void(const RecordedRequest &request, HttpExchange &exchange)>;

    explicit LoopbackHttpServer(QObject *parent = nullptr) : QObject(parent) { }

    // Listens on `address` at `port` (0: any free port); returns the port, 0 on failure.
    quint16 listen(const QHostAddress &address = QHostAddress::LocalHost, quint16 port = 0)
    {
        if (!m_server.listen(address, port))
            return 0;
        QObject::connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection())
                accept(socket);
        });
        return m_server.serverPort();
    }
    void setHandler(Handler handler) { m_handler = std::move(handler); }
    const QList<RecordedRequest> &requests() const { return m_requests; }
    int connections() const { return m_connections; }
    void clear()
    {
        m_requests.clear();
        m_connections = 0;
    }

private:
    void accept(QTcpSocket *socket)
    {
        ++m_connections;
        auto buffer = std::make_shared<QByteArray>();
        QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        QObject::connect(socket, &QTcpSocket::readyRead, this, [this, socket, buffer] {
            if (buffer->endsWith("\r\n\r\n") && buffer->contains("\r\n\r\n"))
                return; // one request per connection; later bytes are ignored
            buffer->append(socket->readAll());
            const qsizetype end = buffer->indexOf("\r\n\r\n");
            if (end < 0)
                return;
            buffer->truncate(end + 4);
            RecordedRequest request;
            request.localAddress = socket->localAddress();
            request.head = *buffer;
            const QList<QByteArray> lines = buffer->split('\n');
            const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
            request.method = first.value(0);
            request.path = first.value(1);
            for (const QByteArray &line : lines) {
                if (line.toLower().startsWith("host:"))
                    request.host = line.mid(5).trimmed();
            }
            m_requests.append(request);
            HttpExchange exchange(socket);
            if (m_handler)
                m_handler(request, exchange);
            else
                exchange.respond(200, "<html><head><title>ok</title></head><body>ok</body></html>");
        });
    }

    QTcpServer m_server;
    Handler m_handler;
    QList<RecordedRequest> m_requests;
    int m_connections = 0;
};
