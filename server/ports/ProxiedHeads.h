#pragma once

#include "transport/RequestHead.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <optional>

// How the heads of a request and its response are rewritten between a client and a published
// port's server, the way reverse proxies do it. No sockets: PortForwarder uses these, and the
// unit tests feed them heads.
namespace cmcp::proxy {

// Why a client's head cannot be forwarded (a header name that is not a token, a control
// character in a value, a folded line: what two parsers could read two ways); empty when it can.
QString headProblem(const RequestHead &head);

// The client asks for a WebSocket: Upgrade: websocket, with "upgrade" in Connection.
bool wantsWebSocket(const RequestHead &head);

// The head sent to the job's server for `head`, whose target (after the published prefix) is
// `target`. The Host becomes 127.0.0.1:`port`; hop-by-hop headers (Connection and what it
// names, Keep-Alive, Proxy-*, TE, Trailer, Upgrade, Transfer-Encoding, Expect), the client's
// Forwarded and X-Forwarded-* and the daemon's own Authorization are dropped; X-Forwarded-Host,
// -Proto and -Prefix say where the client was; one Content-Length of `bodyLength` when there is
// a body. The connection closes after the answer, or upgrades when `upgrade`.
QByteArray upstreamRequest(const RequestHead &head, QByteArrayView target, quint16 port,
                           QByteArrayView publicPrefix, bool upgrade, qint64 bodyLength);

struct ResponseHead
{
    int status = 0;
    QByteArray block; // rewritten, ending with the blank line
};
// The job's server's response head (status line and headers, its blank line included) as the
// client gets it: hop-by-hop headers dropped (Upgrade and Connection kept for a 101 to an
// upgrade asked for), "Connection: close" otherwise, a Location on the server's own loopback
// address or path turned into one under `publicPrefix`, so that a redirect never points the
// client (or the daemon) at an address of its own. Null with `error` for a head that is not
// HTTP/1.x or a 101 nobody asked for.
std::optional<ResponseHead> downstreamResponse(const QByteArray &upstreamHead,
                                               QByteArrayView publicPrefix, quint16 port,
                                               bool upgradeAsked, QString *error);

} // namespace cmcp::proxy
