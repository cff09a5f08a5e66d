#include "transport/StreamedBody.h"

#include "transport/ConnectionGuard.h"

#include <QTcpSocket>
#include <QThread>

#include <cerrno>
#include <unistd.h>

namespace cmcp {

void BodyWriter::write(const QByteArray &bytes, qint64 offset)
{
    qint64 done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = ::pwrite(m_file.get(), bytes.constData() + done,
                                       size_t(bytes.size() - done), offset + done);
        if (wrote < 0) {
            if (errno == EINTR)
                continue;
            Q_EMIT this->wrote(done, errno);
            return;
        }
        done += wrote;
    }
    Q_EMIT this->wrote(done, 0);
}

StreamedBody::StreamedBody(ConnectionGuard *guard, QTcpSocket *socket, StreamedBodyPlan plan,
                           qint64 length, QThread *writerThread, QObject *parent)
    : QObject(parent),
      m_guard(guard),
      m_socket(socket),
      m_plan(std::move(plan)),
      m_writer(new BodyWriter(std::move(m_plan.file))),
      m_left(length)
{
    m_writer->moveToThread(writerThread);
    connect(m_writer, &BodyWriter::wrote, this, &StreamedBody::onWrote);
    connect(socket, &QTcpSocket::disconnected, this, &StreamedBody::onGone);
    connect(socket, &QObject::destroyed, this, &StreamedBody::onGone);
    guard->setBodyReadable([this] { pull(); });
    pull();
}

StreamedBody::~StreamedBody()
{
    // Deleted in its own thread once the writes queued before have run; it closes the file.
    m_writer->deleteLater();
}

void StreamedBody::pull()
{
    while (!m_finished && !m_gone && m_guard && m_left > 0
           && m_collected.size() + m_queued < kInFlightBytes) {
        const QByteArray bytes = m_guard->readBody(kChunkBytes - m_collected.size());
        if (bytes.isEmpty())
            break;
        m_collected += bytes;
        m_left -= bytes.size();
        if (m_collected.size() >= kChunkBytes || m_left == 0)
            send();
    }
    if (!m_finished && m_left == 0 && m_queued == 0 && m_collected.isEmpty())
        finish(0);
    else if (m_guard && m_left > 0 && m_collected.size() + m_queued >= kInFlightBytes)
        m_guard->bodyWaitsForDisk();
}

void StreamedBody::send()
{
    const QByteArray bytes = std::exchange(m_collected, QByteArray());
    const qint64 offset = m_plan.offset + m_written + m_queued;
    m_queued += bytes.size();
    QMetaObject::invokeMethod(
            m_writer, [writer = m_writer, bytes, offset] { writer->write(bytes, offset); },
            Qt::QueuedConnection);
}

void StreamedBody::onWrote(qint64 bytes, int error)
{
    if (m_finished)
        return;
    m_written += bytes;
    m_queued -= bytes;
    if (error != 0) {
        finish(error);
        return;
    }
    if (m_gone && m_left > 0) {
        if (m_queued == 0)
            finish(ECONNABORTED);
        return;
    }
    pull();
}

void StreamedBody::onGone()
{
    if (m_finished || m_gone)
        return;
    m_gone = true;
    if (m_left == 0) {
        // All of it was read: what is queued still goes to disk and the upload counts.
        if (m_queued == 0)
            finish(0);
        return;
    }
    if (m_queued == 0)
        finish(ECONNABORTED);
}

void StreamedBody::finish(int error)
{
    m_finished = true;
    if (m_left > 0 && error == 0)
        error = ECONNABORTED;
    const http::Answer answer = m_plan.finish(m_written, error);
    if (m_guard && m_socket && m_socket->state() == QAbstractSocket::ConnectedState)
        m_guard->answerAndClose(answer, m_left == 0);
    deleteLater();
}

} // namespace cmcp
