#include "transport/ConnectionGuard.h"

#include "transport/HttpWire.h"

#include <QTcpSocket>
#include <QThread>

#include <algorithm>
#include <limits>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {
constexpr int closeGraceMs = 2000;
// What the socket of a streamed body reads from the kernel ahead of the disk.
constexpr qint64 streamedReadBufferBytes = 1024 * 1024;
} // namespace

ConnectionGuard::ConnectionGuard(QTcpSocket *socket, const HttpOptions &options,
                                 std::shared_ptr<IncompleteRequestBytes> incomplete,
                                 std::shared_ptr<const StreamedRequests> streamed)
    : QObject(socket),
      m_socket(socket),
      m_framing(options.maxBodyBytes, streamed ? streamed->allPrefixes() : QList<QByteArray>()),
      m_headerMs(options.headerTimeoutSeconds * 1000),
      m_bodyMs(options.bodyTimeoutSeconds * 1000),
      m_bodyMinBytesPerSecond(qMax<qint64>(1, options.bodyMinBytesPerSecond)),
      m_idleMs(options.idleTimeoutSeconds * 1000),
      m_stallMs(options.bodyStallSeconds * 1000),
      m_incomplete(std::move(incomplete)),
      m_streamed(std::move(streamed))
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, &ConnectionGuard::onDeadline);
    m_stall.setSingleShot(true);
    connect(&m_stall, &QTimer::timeout, this, [this] {
        if (!m_closing && m_phase == Phase::Body)
            timeOut("body", m_stallMs / 1000, "MCP_BODY_STALL_SECONDS");
    });
    connect(socket, &QTcpSocket::readyRead, this, &ConnectionGuard::onReadyRead);
    // Answers are written elsewhere (HttpWire, SseStream); the socket tells when bytes leave.
    connect(socket, &QTcpSocket::bytesWritten, this, [this] {
        if (m_phase == Phase::Idle)
            m_deadline.start(m_idleMs); // a slow reader still draining an answer is not idle
        follow();
    });
    // A client that connects and sends nothing is as slow as one that trickles its headers.
    enter(Phase::Headers, m_headerMs);
}

QList<QByteArray> ConnectionGuard::StreamedRequests::allPrefixes() const
{
    QList<QByteArray> prefixes = takenPrefixes;
    if (!prefix.isEmpty())
        prefixes.append(prefix);
    return prefixes;
}

ConnectionGuard::~ConnectionGuard()
{
    m_incomplete->held -= m_held;
}

bool ConnectionGuard::accountHeldBytes()
{
    const qint64 now = m_closing || m_framing.refused() ? 0 : m_framing.bytesHeld();
    m_incomplete->held += now - m_held;
    m_held = now;
    return m_held == 0 || m_incomplete->held <= m_incomplete->limit;
}

void ConnectionGuard::onReadyRead()
{
    if (m_closing || m_framing.refused()) {
        m_socket->readAll(); // drain so the HTTP parser sees nothing of a refused request
        return;
    }
    if (m_takenOver) {
        if (m_bodyReadable)
            m_bodyReadable();
        return;
    }
    const qint64 bodyLeftBefore = m_framing.bodyLeft();
    const QByteArray fresh = m_socket->peek(m_socket->bytesAvailable());
    if (!m_withholding && m_framing.headerBytes() == 0 && m_framing.mayBeStreamed(fresh)
        && !m_socket->isTransactionStarted()) {
        m_socket->startTransaction();
        m_withholding = true;
        m_withheldAfter = m_framing.requestsComplete();
    }
    if (m_withholding)
        m_socket->skip(fresh.size()); // read, so that the parser's readAll() finds nothing
    if (const std::optional<RequestFraming::Refusal> refusal = m_framing.feed(fresh))
        return refuse(refusal->status, refusal->reason);
    if (m_framing.streamedHeadComplete()) {
        if (!m_withholding || m_framing.requestsComplete() != m_withheldAfter)
            return refuse(400,
                          "a request whose body is streamed cannot follow another request in "
                          "the same write (pipelined): send it once the answer before has "
                          "arrived");
        return takeOver();
    }
    if (m_withholding
        && (m_framing.requestsComplete() != m_withheldAfter || !m_framing.mayBeStreamed())) {
        // Another request: the parser reads all of it, next in this same signal.
        m_socket->rollbackTransaction();
        m_withholding = false;
    }
    if (!accountHeldBytes())
        return refuse(503,
                      "the requests still arriving hold the most memory allowed "
                      "(MCP_INCOMPLETE_REQUESTS_MAX_MB); try again later");
    if (m_framing.bodyLeft() > 0 && m_framing.bodyLeft() != bodyLeftBefore)
        m_stall.start(m_stallMs);
    follow();
}

void ConnectionGuard::takeOver()
{
    const QByteArray block = m_framing.streamedHead();
    m_socket->rollbackTransaction();
    m_withholding = false;
    m_socket->skip(block.size()); // the body's first bytes stay in the socket for the route
    QObject::disconnect(m_socket, &QTcpSocket::readyRead, m_streamed->parser, nullptr);
    if (std::any_of(m_streamed->takenPrefixes.begin(), m_streamed->takenPrefixes.end(),
                    [&block](const QByteArray &prefix) { return block.startsWith(prefix); })) {
        std::optional<RequestHead> head = RequestHead::parse(block);
        if (!head)
            return refuse(400, "the request line is not METHOD /path HTTP/1.1");
        head->peer = m_socket->peerAddress();
        return handOver(*head);
    }
    m_socket->setReadBufferSize(streamedReadBufferBytes);
    m_takenOver = true;
    m_framing.beginStreamedBody();
    accountHeldBytes();
    follow();
    std::optional<RequestHead> head = RequestHead::parse(block);
    if (!head)
        return refuse(400, "the request line is not METHOD /path HTTP/1.1");
    head->peer = m_socket->peerAddress();
    StreamedBodyPlan plan = m_streamed->plan(*head);
    // A client that waits for "100 Continue" sends no body after a refusal.
    const bool waitsToSend =
            head->value("expect").compare("100-continue", Qt::CaseInsensitive) == 0;
    if (plan.refusal)
        return answerAndClose(*plan.refusal, waitsToSend || m_framing.bodyLeft() == 0);
    if (waitsToSend)
        m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
    new StreamedBody(this, m_socket, std::move(plan), m_framing.bodyLeft(),
                     m_streamed->writerThread, m_streamed->parser);
}

void ConnectionGuard::handOver(const RequestHead &head)
{
    m_takenOver = true;
    m_closing = true; // nothing of this guard acts on the connection any more
    m_deadline.stop();
    m_stall.stop();
    accountHeldBytes();
    QObject::disconnect(m_socket, nullptr, this, nullptr);
    QTcpSocket *socket = m_socket;
    const std::shared_ptr<const StreamedRequests> streamed = m_streamed;
    deleteLater();
    streamed->take(head, socket);
}

QByteArray ConnectionGuard::readBody(qint64 most)
{
    if (m_closing || !m_takenOver)
        return {};
    const QByteArray bytes =
            m_socket->read(std::min({most, m_framing.bodyLeft(), m_socket->bytesAvailable()}));
    if (bytes.isEmpty()) {
        if (m_framing.bodyLeft() > 0 && !m_stall.isActive())
            m_stall.start(m_stallMs); // reading again after the disk: the client's turn
        return bytes;
    }
    m_framing.feed(bytes); // body bytes only: nothing to refuse
    if (m_framing.bodyLeft() > 0)
        m_stall.start(m_stallMs);
    follow();
    return bytes;
}

void ConnectionGuard::follow()
{
    if (m_closing)
        return;
    if (m_framing.bodyLeft() > 0) {
        if (m_phase != Phase::Body) {
            // Time for the body grows with its size, so that large legitimate uploads on slow
            // links pass while a trickle is still cut off.
            enter(Phase::Body, m_bodyMs + m_framing.bodyLeft() * 1000 / m_bodyMinBytesPerSecond);
        }
        return;
    }
    m_stall.stop();
    if (m_framing.headerBytes() > 0) {
        if (m_phase != Phase::Headers)
            enter(Phase::Headers, m_headerMs);
    } else if (answerPending()) {
        if (m_phase != Phase::Serving)
            enter(Phase::Serving, -1);
    } else if (m_phase != Phase::Idle && m_phase != Phase::Headers) {
        // Headers at this point means nothing has arrived yet since connecting: that deadline runs.
        enter(Phase::Idle, m_idleMs);
    }
}

void ConnectionGuard::enter(Phase phase, qint64 deadlineMs)
{
    m_phase = phase;
    if (deadlineMs < 0)
        m_deadline.stop();
    else
        m_deadline.start(int(qMin<qint64>(deadlineMs, std::numeric_limits<int>::max())));
}

bool ConnectionGuard::answerPending() const
{
    return http::isStreaming(m_socket)
            || http::responsesComplete(m_socket) < m_framing.requestsComplete();
}

void ConnectionGuard::onDeadline()
{
    if (m_closing)
        return;
    switch (m_phase) {
    case Phase::Headers:
        return timeOut("headers", m_headerMs / 1000, "MCP_HEADER_TIMEOUT_SECONDS");
    case Phase::Body:
        return timeOut("body", m_bodyMs / 1000, "MCP_BODY_TIMEOUT_SECONDS");
    case Phase::Idle:
        if (answerPending())
            return follow();
        spdlog::debug("closing a keep-alive connection from {}: idle for {} s",
                      m_socket->peerAddress().toString().toStdString(), m_idleMs / 1000);
        m_closing = true;
        m_socket->disconnectFromHost();
        QTimer::singleShot(closeGraceMs, m_socket, [socket = m_socket] { socket->abort(); });
        return;
    case Phase::Serving:
        return;
    }
}

void ConnectionGuard::timeOut(const char *what, int seconds, const char *setting)
{
    const QByteArray why = qstrcmp(setting, "MCP_BODY_STALL_SECONDS") == 0
            ? QByteArray("no byte of the request body arrived for ") + QByteArray::number(seconds)
                    + " s (MCP_BODY_STALL_SECONDS=" + QByteArray::number(seconds) + ')'
            : QByteArray("the request ") + what + " did not arrive within the deadline (" + setting
                    + '=' + QByteArray::number(seconds) + ')';
    if (answerPending()) {
        // An answer is still owed on this connection: a 408 would be read as that answer.
        spdlog::info("dropping a connection from {}: {}",
                     m_socket->peerAddress().toString().toStdString(), why.toStdString());
        m_closing = true;
        m_socket->abort();
        return;
    }
    refuse(408, why);
}

void ConnectionGuard::refuse(int status, const QByteArray &why)
{
    spdlog::log(status == 408 ? spdlog::level::info : spdlog::level::warn,
                "refusing a request from {}: {}", m_socket->peerAddress().toString().toStdString(),
                why.toStdString());
    // A client this slow gets no more time: closed once the answer is out (or the grace ends).
    answerAndClose(http::jsonRpcError(status, -32600, QString::fromUtf8(why)), status == 408);
}

void ConnectionGuard::answerAndClose(const http::Answer &answer, bool bodyRead)
{
    m_closing = true;
    m_deadline.stop();
    m_stall.stop();
    accountHeldBytes(); // a refused request holds nothing any more
    if (m_withholding) {
        m_socket->rollbackTransaction();
        m_withholding = false;
    }
    m_socket->readAll();
    http::Answer closing = answer;
    if (!closing.headers.contains(QPair<QByteArray, QByteArray>("Connection", "close")))
        closing.headers.append(qMakePair(QByteArray("Connection"), QByteArray("close")));
    http::writeAnswer(m_socket, closing);
    m_socket->flush();
    if (bodyRead) {
        m_socket->disconnectFromHost();
        QTimer::singleShot(closeGraceMs, m_socket, [socket = m_socket] { socket->abort(); });
        return;
    }
    // Let a client sending a too large request finish and read the answer, but not for long.
    QTimer::singleShot(closeGraceMs, m_socket,
                       [socket = m_socket] { socket->disconnectFromHost(); });
}

} // namespace cmcp
