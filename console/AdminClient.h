#pragma once

#include "common/AdminProtocol.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QTimer>

#include <functional>

class QLocalSocket;

namespace cmcp {

// The console's end of the admin channel (the RpcClient of Transmission's Qt client): owns
// the socket, says hello, matches replies to requests, hands events on, and reconnects by
// itself when the daemon goes away.
class AdminClient : public QObject
{
    Q_OBJECT
public:
    enum class State { Disconnected, Connecting, Connected };
    Q_ENUM(State)

    // result on success; otherwise errorCode (an admin::error* code, or "disconnected") and
    // errorMessage.
    using ReplyHandler = std::function<void(const QJsonObject &result, const QString &errorCode,
                                            const QString &errorMessage)>;

    explicit AdminClient(QObject *parent = nullptr);
    ~AdminClient() override;

    // Connects now, and again every reconnectInterval while disconnected.
    void open(const QString &socketPath);
    void close();
    void setReconnectInterval(int milliseconds) { m_reconnect.setInterval(milliseconds); }

    State state() const { return m_state; }
    const QString &socketPath() const { return m_path; }
    // Why the last connection ended or failed; empty while connected.
    const QString &lastError() const { return m_lastError; }
    // The daemon's version, from its hello.
    const QString &serverVersion() const { return m_serverVersion; }

    // Returns the request id; the handler runs once, also when the connection ends first.
    qint64 request(const QString &method, const QJsonObject &params = {},
                   ReplyHandler handler = {});

Q_SIGNALS:
    void stateChanged(cmcp::AdminClient::State state);
    // The hello exchange is done: requests may be sent.
    void connected();
    void eventReceived(const QString &event, const QJsonObject &data);
    // An error the daemon sent outside any request (refusal, a line it could not read).
    void errorReceived(const QString &code, const QString &message);

private:
    void tryConnect();
    void readLines();
    void handle(const admin::Message &message);
    void lost(const QString &why);
    void setState(State state);

    QLocalSocket *m_socket = nullptr;
    QString m_path;
    QTimer m_reconnect;
    State m_state = State::Disconnected;
    QString m_lastError;
    QString m_serverVersion;
    admin::LineSplitter m_splitter;
    qint64 m_nextId = 1;
    QHash<qint64, ReplyHandler> m_pending;
    bool m_closing = false;
};

} // namespace cmcp
