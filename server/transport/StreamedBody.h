#pragma once

#include "transport/HttpWire.h"

#include "posix/UniqueFd.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>

#include <functional>
#include <optional>

class QTcpSocket;
class QThread;

namespace cmcp {

class ConnectionGuard;

// What a route makes of the head of a request whose body it takes as a stream.
struct StreamedBodyPlan
{
    // Set: the answer, given before any byte of the body is read.
    std::optional<http::Answer> refusal;
    // Otherwise the body goes to `file` from `offset` on, and `finish`, called once on the event
    // loop, says what to answer: after all of it is written (`error` 0), after a write failed
    // (its errno), or after the client went away before its end (ECONNABORTED; the answer goes
    // nowhere). `written` counts the bytes written from `offset`.
    UniqueFd file;
    qint64 offset = 0;
    std::function<http::Answer(qint64 written, int error)> finish;
};

// Writes on a worker thread, so that a disk that lags (or a full page cache, which throttles
// writers) never blocks the event loop. One per streamed body, in order.
class BodyWriter : public QObject
{
    Q_OBJECT
public:
    explicit BodyWriter(UniqueFd file) : m_file(std::move(file)) { }
    void write(const QByteArray &bytes, qint64 offset);

Q_SIGNALS:
    void wrote(qint64 bytes, int error);

private:
    UniqueFd m_file;
};

// Moves one request body from the socket to a file with flat memory: it reads from the socket
// only while less than kInFlightBytes wait for the disk, and the socket (its read buffer capped)
// stops reading from the kernel meanwhile, so a client faster than the disk is held back by TCP
// itself. The answer of the plan's `finish` closes the connection.
class StreamedBody : public QObject
{
    Q_OBJECT
public:
    static constexpr qint64 kChunkBytes = 512 * 1024;
    static constexpr qint64 kInFlightBytes = 2 * kChunkBytes;

    StreamedBody(ConnectionGuard *guard, QTcpSocket *socket, StreamedBodyPlan plan, qint64 length,
                 QThread *writerThread, QObject *parent);
    ~StreamedBody() override;

private:
    void pull();
    void send();
    void onWrote(qint64 bytes, int error);
    void onGone();
    void finish(int error);

    QPointer<ConnectionGuard> m_guard;
    QPointer<QTcpSocket> m_socket;
    StreamedBodyPlan m_plan;
    BodyWriter *m_writer;
    qint64 m_left; // body bytes not read from the socket yet
    QByteArray m_collected; // read, not handed to the writer yet
    qint64 m_queued = 0; // handed to the writer, not written yet
    qint64 m_written = 0;
    bool m_gone = false;
    bool m_finished = false;
};

} // namespace cmcp
