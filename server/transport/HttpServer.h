#pragma once

#include "transport/HttpOptions.h"
#include "transport/HttpWire.h"
#include "transport/RequestHead.h"
#include "transport/StreamedBody.h"

#include "mcp/Principal.h"

#include <QAbstractHttpServer>
#include <QThread>

#include <functional>

namespace cmcp {

class McpServer;
class StreamableHttpTransport;
class LegacySseTransport;

// The HTTP door: checks Host, Origin and the bearer token on every request, then routes
// /mcp (Streamable HTTP), /sse and /messages (legacy HTTP+SSE) and /health.
class GuardedTcpServer;

class HttpServer : public QAbstractHttpServer
{
    Q_OBJECT
public:
    HttpServer(McpServer &mcp, HttpOptions options, QObject *parent = nullptr);
    ~HttpServer() override;

    // Returns the port listened on (useful with port 0), or 0 on failure with `error` set.
    quint16 start(QString *error);

    // Bytes of answers written to sockets but not yet handed to the kernel: a daemon that
    // drains quits once this is zero, so that the last answers are not cut off.
    qint64 unsentBytes() const;

    // Requests whose path starts with `prefix`, past the Host, Origin and bearer checks, go to
    // `route` with the authenticated principal (the daemon adds the file transfers' door here).
    using Route = std::function<void(const QHttpServerRequest &request, QTcpSocket *socket,
                                     const Principal &principal)>;
    void addRoute(const QString &prefix, Route route);
    // PUT requests whose path starts with `prefix` never reach Qt's parser, which would hold
    // their whole body: past the same checks, `route` judges the head before any of the body is
    // read, and the body is streamed to the file its plan names (ConnectionGuard,
    // StreamedBody). Their connection closes after the answer. One such route; set before start().
    using StreamedRoute =
            std::function<StreamedBodyPlan(const RequestHead &head, const Principal &principal)>;
    void setStreamedPutRoute(const QString &prefix, StreamedRoute route);
    // Requests whose path starts with `prefix` (by the common methods) take their whole
    // connection out of Qt's parser once their head is read, past the Host and Origin checks:
    // the route gets the head, the socket with the rest of the request still in it, and the
    // principal of the bearer token when the request carries a valid one. It answers, relays or
    // upgrades as it likes, and closes the connection when done. The route authenticates: the
    // published ports' door lets a public port's URL in without a bearer token. Set before
    // start().
    using TakenRoute = std::function<void(const RequestHead &head, QTcpSocket *socket,
                                          const std::optional<Principal> &principal)>;
    void setTakenConnectionRoute(const QString &prefix, TakenRoute route);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    bool hostAllowed(const QByteArray &hostHeader) const;
    bool originAllowed(const QByteArray &origin) const;
    // The checks of every request, for both kinds: the Host and Origin headers (a refusal), and
    // then, for all but /health, whether the server drains and the bearer token (a principal,
    // or null with the refusal set).
    std::optional<http::Answer> refusalAtDoor(const QString &path, const QByteArray &host,
                                              const QByteArray &origin,
                                              const QHostAddress &peer) const;
    std::optional<Principal> admit(const QByteArray &authorization, http::Answer *refusal) const;
    StreamedBodyPlan planStreamed(const RequestHead &head) const;
    void takeConnection(const RequestHead &head, QTcpSocket *socket) const;
    void writeHealth(QTcpSocket *socket);

    McpServer &m_mcp;
    HttpOptions m_options;
    GuardedTcpServer *m_tcp = nullptr;
    StreamableHttpTransport *m_streamable;
    LegacySseTransport *m_legacySse;
    QList<std::pair<QString, Route>> m_routes;
    QString m_streamedPrefix;
    StreamedRoute m_streamedRoute;
    QString m_takenPrefix;
    TakenRoute m_takenRoute;
    QThread m_bodyWriter; // writes streamed bodies to disk
};

} // namespace cmcp
