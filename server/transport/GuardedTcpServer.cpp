#include "GuardedTcpServer.h"

#include "HttpWire.h"

#include <QTcpSocket>
#include <QTimer>

#include <sys/resource.h>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

constexpr qint64 maxHeaderBytes = 64 * 1024;

// Tracks where the byte stream of one connection is: in a request's headers, or in its body.
class RequestGuard : public QObject
{
public:
    RequestGuard(QTcpSocket *socket, qint64 maxBody) : QObject(socket), m_socket(socket), m_maxBody(maxBody) {}

    void onReadyRead()
    {
        if (m_refused) {
            m_socket->readAll(); // drain so the HTTP parser sees nothing of a refused request
            return;
        }
        const QByteArray fresh = m_socket->peek(m_socket->bytesAvailable());
        qsizetype at = 0;
        while (at < fresh.size() && !m_refused) {
            if (m_bodyLeft > 0) {
                const qint64 take = qMin<qint64>(m_bodyLeft, fresh.size() - at);
                m_bodyLeft -= take;
                at += take;
                continue;
            }
            const qsizetype end = findHeaderEnd(fresh, at);
            if (end < 0) {
                m_header += fresh.mid(at);
                if (m_header.size() > maxHeaderBytes)
                    refuse(431, "the request headers exceed 64 KiB");
                return;
            }
            m_header += fresh.mid(at, end - at);
            at = end;
            inspectHeader();
            m_header.clear();
        }
    }

private:
    // Finds the end of the header block, also when "\r\n\r\n" straddles two reads.
    qsizetype findHeaderEnd(const QByteArray &fresh, qsizetype from) const
    {
        const QByteArray tail = m_header.right(3);
        const QByteArray joined = tail + fresh.mid(from);
        const qsizetype found = joined.indexOf("\r\n\r\n");
        if (found < 0)
            return -1;
        return from + found + 4 - tail.size();
    }

    void inspectHeader()
    {
        qint64 length = 0;
        for (const QByteArray &line : m_header.split('\n')) {
            const qsizetype colon = line.indexOf(':');
            if (colon < 0)
                continue;
            const QByteArray name = line.left(colon).trimmed().toLower();
            const QByteArray value = line.mid(colon + 1).trimmed();
            if (name == "content-length") {
                bool ok = false;
                length = value.toLongLong(&ok);
                if (!ok || length < 0)
                    return refuse(400, "the Content-Length header is not a number");
            } else if (name == "transfer-encoding" && value.toLower() != "identity") {
                return refuse(411, "chunked request bodies are not accepted: send a Content-Length");
            }
        }
        if (length > m_maxBody)
            return refuse(413, QByteArray("the request body of ") + QByteArray::number(length)
                                       + " bytes exceeds the limit of " + QByteArray::number(m_maxBody)
                                       + " bytes (MCP_MAX_BODY_MB)");
        m_bodyLeft = length;
    }

    void refuse(int status, const QByteArray &why)
    {
        m_refused = true;
        spdlog::warn("refusing a request from {}: {}", m_socket->peerAddress().toString().toStdString(),
                     why.toStdString());
        m_socket->readAll();
        http::writeJsonRpcError(m_socket, status, -32600, QString::fromUtf8(why), {{"Connection", "close"}});
        // Let the client finish sending and read the answer, but not for long.
        QTimer::singleShot(2000, m_socket, [socket = m_socket] { socket->disconnectFromHost(); });
        m_socket->flush();
    }

    QTcpSocket *m_socket;
    qint64 m_maxBody;
    QByteArray m_header;
    qint64 m_bodyLeft = 0;
    bool m_refused = false;
};

} // namespace

GuardedTcpServer::GuardedTcpServer(qint64 maxBodyBytes, QObject *parent)
    : QTcpServer(parent), m_maxBodyBytes(maxBodyBytes)
{
    // Qt 6.4 treats EMFILE from accept() as a temporary error and retries at once: out of
    // descriptors the event loop would spin at full CPU. So sockets are counted and kept
    // below the descriptor limit, leaving room for files and child processes.
    rlimit limit{};
    const qint64 descriptors = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? qint64(limit.rlim_cur) : 1024;
    m_servedLimit = qMax<qint64>(8, descriptors - 128);
    m_acceptLimit = qMax<qint64>(16, descriptors - 32);
}

void GuardedTcpServer::incomingConnection(qintptr descriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    ++m_openSockets;
    connect(socket, &QObject::destroyed, this, [this] { --m_openSockets; });
    if (m_openSockets >= m_acceptLimit)
        pauseWhileFull();
    if (m_openSockets > m_servedLimit) {
        // Answer and close rather than leave the client hanging.
        ++m_refusedSinceWarning;
        if (!m_lastRefusalWarning.isValid() || m_lastRefusalWarning.hasExpired(10000)) {
            spdlog::warn("refused {} connection(s): {} sockets are open, the most the descriptor limit allows",
                         m_refusedSinceWarning, m_openSockets - 1);
            m_refusedSinceWarning = 0;
            m_lastRefusalWarning.start();
        }
        http::writeJsonRpcError(socket, 503, -32000, QStringLiteral("too many open connections: try again later"),
                                {{"Connection", "close"}, {"Retry-After", "1"}});
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        socket->disconnectFromHost();
        return;
    }
    // Connected before the HTTP server connects its own slot, so the guard sees bytes first.
    auto *guard = new RequestGuard(socket, m_maxBodyBytes);
    connect(socket, &QTcpSocket::readyRead, guard, [guard] { guard->onReadyRead(); });
    addPendingConnection(socket);
}

void GuardedTcpServer::pauseWhileFull()
{
    pauseAccepting();
    QTimer::singleShot(200, this, [this] {
        if (m_openSockets >= m_acceptLimit)
            pauseWhileFull();
        else
            resumeAccepting();
    });
}

} // namespace cmcp
