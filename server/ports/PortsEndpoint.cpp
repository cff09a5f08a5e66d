#include "ports/PortsEndpoint.h"

#include "ports/PortForwarder.h"
#include "ports/ProxiedHeads.h"
#include "ports/PublishedPorts.h"
#include "transport/HttpServer.h"
#include "transport/HttpWire.h"

#include <QTcpSocket>

namespace cmcp {

namespace {

void answerAndClose(QTcpSocket *socket, int status, const QString &message,
                    http::Headers headers = {})
{
    headers.append(qMakePair(QByteArray("Cache-Control"), QByteArray("no-store")));
    http::writeAnswer(socket, http::jsonRpcError(status, -32600, message, headers), true);
}

void serve(PublishedPorts &ports, const RequestHead &head, QTcpSocket *socket,
           const std::optional<Principal> &principal)
{
    // The raw target: "/ports/<token>" then the server's own target, "/" at least.
    const QByteArray prefix = PublishedPorts::urlPrefix().toLatin1();
    const QByteArray afterPrefix = head.target.mid(prefix.size());
    const qsizetype tokenEnd = afterPrefix.indexOf('/');
    const qsizetype queryStart = afterPrefix.indexOf('?');
    const bool bare = tokenEnd < 0 || (queryStart >= 0 && queryStart < tokenEnd);
    const QByteArray token = bare
            ? afterPrefix.left(queryStart < 0 ? afterPrefix.size() : queryStart)
            : afterPrefix.left(tokenEnd);
    const std::shared_ptr<PublishedPorts::Port> port = ports.find(QString::fromLatin1(token));
    const QString unknown = QStringLiteral("no published port at this URL (unknown, revoked or "
                                           "expired)");
    if (!port)
        return answerAndClose(socket, 404, unknown);
    if (!port->isPublic) {
        if (!principal)
            return answerAndClose(socket, 401,
                                  QStringLiteral("this published port is private: send the bearer "
                                                 "token of the principal that published it"),
                                  {{"WWW-Authenticate", "Bearer realm=\"cmcp\""}});
        if (!(*principal == port->principal))
            return answerAndClose(socket, 404, unknown);
    }
    if (bare) {
        const QByteArray query = queryStart < 0 ? QByteArray() : afterPrefix.mid(queryStart);
        return answerAndClose(socket, 308, QStringLiteral("the published port is under its slash"),
                              {{"Location", prefix + token + '/' + query}});
    }
    if (const QString problem = proxy::headProblem(head); !problem.isEmpty())
        return answerAndClose(socket, 400, problem);
    if (port->openConnections >= ports.limits().maxConnections) {
        ++port->refusedConnections;
        return answerAndClose(socket, 503,
                              QStringLiteral("the published port has %1 connections open, the "
                                             "most allowed (PORTS_MAX_CONNECTIONS)")
                                      .arg(ports.limits().maxConnections),
                              {{"Retry-After", "1"}});
    }
    auto *forwarder = new PortForwarder(socket, head, afterPrefix.mid(tokenEnd), port, ports);
    forwarder->start();
}

} // namespace

void addPortsEndpoint(HttpServer &http, PublishedPorts &ports)
{
    http.setTakenConnectionRoute(PublishedPorts::urlPrefix(),
                                 [&ports](const RequestHead &head, QTcpSocket *socket,
                                          const std::optional<Principal> &principal) {
                                     serve(ports, head, socket, principal);
                                 });
}

} // namespace cmcp
