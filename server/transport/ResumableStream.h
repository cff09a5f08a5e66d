#pragma once

#include "transport/HttpOptions.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPair>

#include <memory>
#include <optional>

class QTcpSocket;

namespace cmcp {

class SseStream;

// The SSE answer to one POST, with numbered events kept in memory (bounded), so that a client
// that lost the connection, or that the server asked to reconnect, resumes it with a GET
// carrying Last-Event-ID (SEP-1699, protocol 2025-11-25). Event ids read "<stream>_<seq>".
class ResumableStream : public QObject
{
    Q_OBJECT
public:
    ResumableStream(int id, const HttpOptions &options, QObject *parent = nullptr);
    ~ResumableStream() override;

    int id() const { return m_id; }
    // Delivers the stream on `socket`: from the start (a priming event first), or after the
    // event `afterSeq` the client last saw. False when those events are no longer kept.
    bool attach(QTcpSocket *socket, const QByteArray &sessionId, std::optional<quint64> afterSeq);
    void send(const QByteArray &data);
    // Ends the live HTTP response; later events wait for the client to come back.
    void detach();
    // No more events will come; the live response ends once it has them all.
    void finish();
    bool isFinished() const { return m_finished; }

    static std::optional<QPair<int, quint64>> parseEventId(const QByteArray &eventId);

private:
    QByteArray eventId(quint64 seq) const;
    void write(quint64 seq, const QByteArray &data);

    const int m_id;
    const HttpOptions &m_options;
    quint64 m_nextSeq = 1;
    QList<QPair<quint64, QByteArray>> m_events;
    qint64 m_keptBytes = 0;
    std::unique_ptr<SseStream> m_live;
    bool m_finished = false;
};

} // namespace cmcp
