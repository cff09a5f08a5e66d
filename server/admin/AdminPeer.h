#pragma once

#include "common/AdminProtocol.h"

#include <QObject>
#include <QPointer>

class QLocalSocket;

namespace cmcp {

// One connected console: reads its lines, answers malformed ones, and writes to it without
// letting a slow reader make the daemon buffer without bound. Events are dropped while more
// than softLimit bytes wait to be written, and a "dropped" event says how many once the queue
// drains; a peer whose replies alone pass hardLimit is disconnected.
class AdminPeer : public QObject
{
    Q_OBJECT
public:
    static constexpr qint64 softLimit = 1024 * 1024;
    static constexpr qint64 hardLimit = 16 * 1024 * 1024;

    AdminPeer(QLocalSocket *socket, const QString &description, QObject *parent = nullptr);
    ~AdminPeer() override;

    const QString &description() const { return m_description; }
    // Log lines at or above this spdlog level are sent; -1: none (the default).
    int logLevel() const { return m_logLevel; }
    void setLogLevel(int level) { m_logLevel = level; }

    // Hello, replies and errors: always queued (up to hardLimit).
    void send(const admin::Message &message);
    // Events: dropped and counted while the peer is behind.
    void sendEvent(const admin::Message &message);
    quint64 droppedTotal() const { return m_droppedTotal; }

    void disconnectWithError(const QString &code, const QString &message);

Q_SIGNALS:
    void requestReceived(cmcp::AdminPeer *peer, const cmcp::admin::Message &request);
    void gone(cmcp::AdminPeer *peer);

private:
    void readLines();
    void handleLine(const admin::LineSplitter::Line &line);
    void reportDropped();
    void write(const QByteArray &bytes);

    QPointer<QLocalSocket> m_socket;
    QString m_description;
    admin::LineSplitter m_splitter;
    bool m_greeted = false;
    int m_logLevel = -1;
    quint64 m_droppedPending = 0;
    quint64 m_droppedTotal = 0;
};

} // namespace cmcp
