#include "transport/HttpServer.h"

#include "transport/GuardedTcpServer.h"
#include "transport/HttpWire.h"
#include "transport/LegacySseTransport.h"
#include "mcp/McpServer.h"
#include "transport/StreamableHttpTransport.h"

#include <QDateTime>
#include <QHttpServerRequest>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QUrl>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

// The host of an authority written the one way a browser writes it, lower-cased: a name of
// letters, digits, '-', '.' and '_', or a bracketed IPv6 address, then at most one ":port" of
// digits. Anything else (user info "evil.com:80@127.0.0.1", a second port "127.0.0.1:8000:80",
// spaces, percent escapes) is no host at all, so that no other parser can read the header as
// naming a host the allow-list did not approve. "127.1" is read as written, and matches only
// an allow-list entry "127.1".
QString strictHost(QStringView authority)
{
    static const QRegularExpression form(
            QStringLiteral(R"(^([a-z0-9._-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$)"),
            QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch match = form.match(authority.toString());
    return match.hasMatch() ? match.captured(1).toLower() : QString();
}

// The methods whose requests a taken-connection route receives; any other reaches Qt's parser
// and is answered 405 there.
constexpr const char *takenMethods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"};

} // namespace

HttpServer::HttpServer(McpServer &mcp, HttpOptions options, QObject *parent)
    : QAbstractHttpServer(parent),
      m_mcp(mcp),
      m_options(std::move(options)),
      m_streamable(new StreamableHttpTransport(mcp, m_options, this)),
      m_legacySse(new LegacySseTransport(mcp, m_options, this))
{
}

HttpServer::~HttpServer()
{
    m_bodyWriter.quit();
    m_bodyWriter.wait();
}

quint16 HttpServer::start(QString *error)
{
    if (m_options.address.isNull()) {
        *error =
                QStringLiteral(
                        "MCP_HOST=\"%1\" does not resolve to an address this machine can listen on")
                        .arg(m_options.host);
        return 0;
    }
    auto streamed = std::make_shared<ConnectionGuard::StreamedRequests>();
    if (m_streamedRoute) {
        m_bodyWriter.setObjectName(QStringLiteral("body writer"));
        m_bodyWriter.start();
        streamed->prefix = "PUT " + m_streamedPrefix.toLatin1();
        streamed->parser = this;
        streamed->writerThread = &m_bodyWriter;
        streamed->plan = [this](const RequestHead &head) { return planStreamed(head); };
    }
    if (m_takenRoute) {
        streamed->parser = this;
        for (const char *method : takenMethods)
            streamed->takenPrefixes.append(QByteArray(method) + ' ' + m_takenPrefix.toLatin1());
        streamed->take = [this](const RequestHead &head, QTcpSocket *socket) {
            takeConnection(head, socket);
        };
    }
    auto *tcp = new GuardedTcpServer(m_options, std::move(streamed), this);
    if (!tcp->listen(m_options.address, m_options.port)) {
        *error = QStringLiteral("cannot listen on %1:%2: %3")
                         .arg(m_options.address.toString())
                         .arg(m_options.port)
                         .arg(tcp->errorString());
        delete tcp;
        return 0;
    }
    bind(tcp);
    m_tcp = tcp;
    return tcp->serverPort();
}

qint64 HttpServer::unsentBytes() const
{
    qint64 bytes = 0;
    if (m_tcp) {
        for (const QTcpSocket *socket :
             m_tcp->findChildren<QTcpSocket *>(Qt::FindDirectChildrenOnly))
            bytes += socket->bytesToWrite();
    }
    return bytes;
}

bool HttpServer::hostAllowed(const QByteArray &hostHeader) const
{
    const QString host = strictHost(QString::fromLatin1(hostHeader));
    return !host.isEmpty() && m_options.allowedHosts.contains(host);
}

bool HttpServer::originAllowed(const QByteArray &origin) const
{
    if (origin.isEmpty())
        return true; // not a browser: DNS rebinding needs a browser
    const QString text = QString::fromLatin1(origin).trimmed();
    if (!m_options.allowedOrigins.isEmpty())
        return m_options.allowedOrigins.contains(text, Qt::CaseInsensitive);
    // An origin is "scheme://authority" and nothing more (RFC 6454): no path, no user info.
    for (const QLatin1String scheme : {QLatin1String("http://"), QLatin1String("https://")}) {
        if (text.startsWith(scheme, Qt::CaseInsensitive)) {
            const QString host = strictHost(QStringView(text).sliced(scheme.size()));
            return !host.isEmpty() && m_options.allowedHosts.contains(host);
        }
    }
    return false;
}

std::optional<http::Answer> HttpServer::refusalAtDoor(const QString &path, const QByteArray &host,
                                                      const QByteArray &origin,
                                                      const QHostAddress &peer) const
{
    if (!hostAllowed(host)) {
        spdlog::warn("403 for {} {}: Host '{}' is not allowed", peer.toString().toStdString(),
                     path.toStdString(), host.toStdString());
        return http::jsonRpcError(
                403, -32600,
                QStringLiteral("Host header '%1' is not allowed (MCP_ALLOWED_HOSTS)")
                        .arg(QString::fromLatin1(host)));
    }
    if (!originAllowed(origin)) {
        spdlog::warn("403 for {} {}: Origin '{}' is not allowed", peer.toString().toStdString(),
                     path.toStdString(), origin.toStdString());
        return http::jsonRpcError(403, -32600,
                                  QStringLiteral("Origin '%1' is not allowed (MCP_ALLOWED_ORIGINS)")
                                          .arg(QString::fromLatin1(origin)));
    }
    return std::nullopt;
}

std::optional<Principal> HttpServer::admit(const QByteArray &authorization,
                                           http::Answer *refusal) const
{
    if (m_mcp.isDraining()) {
        // A load balancer sends the client elsewhere; a lone client tries again later.
        *refusal = http::jsonRpcError(503, -32000,
                                      QStringLiteral("the server is shutting down: it takes no "
                                                     "new requests (calls in flight finish)"),
                                      {{"Retry-After", "1"}, {"Connection", "close"}});
        return std::nullopt;
    }
    std::optional<Principal> principal = m_options.tokens.principalFor(authorization);
    if (!principal)
        *refusal =
                http::jsonRpcError(401, -32600, QStringLiteral("a valid bearer token is required"),
                                   {{"WWW-Authenticate", "Bearer realm=\"cmcp\""}});
    return principal;
}

StreamedBodyPlan HttpServer::planStreamed(const RequestHead &head) const
{
    StreamedBodyPlan refused;
    refused.refusal = refusalAtDoor(head.path, head.value("host"), head.value("origin"), head.peer);
    if (refused.refusal)
        return refused;
    http::Answer refusal;
    const std::optional<Principal> principal = admit(head.value("authorization"), &refusal);
    if (!principal) {
        refused.refusal = refusal;
        return refused;
    }
    return m_streamedRoute(head, *principal);
}

void HttpServer::setTakenConnectionRoute(const QString &prefix, TakenRoute route)
{
    m_takenPrefix = prefix;
    m_takenRoute = std::move(route);
}

void HttpServer::takeConnection(const RequestHead &head, QTcpSocket *socket) const
{
    std::optional<http::Answer> refusal =
            refusalAtDoor(head.path, head.value("host"), head.value("origin"), head.peer);
    if (!refusal && m_mcp.isDraining()) {
        http::Answer draining;
        admit({}, &draining); // the draining refusal comes before any token is looked at
        refusal = draining;
    }
    if (refusal) {
        http::writeAnswer(socket, *refusal, true);
        return;
    }
    m_takenRoute(head, socket, m_options.tokens.principalFor(head.value("authorization")));
}

void HttpServer::setStreamedPutRoute(const QString &prefix, StreamedRoute route)
{
    m_streamedPrefix = prefix;
    m_streamedRoute = std::move(route);
}

bool HttpServer::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    const QString path = request.url().path();
    if (const std::optional<http::Answer> refusal = refusalAtDoor(
                path, request.value("host"), request.value("origin"), request.remoteAddress())) {
        http::writeAnswer(socket, *refusal);
        return true;
    }
    if (path == QLatin1String("/health")) {
        writeHealth(socket);
        return true;
    }
    http::Answer refusal;
    const std::optional<Principal> principal = admit(request.value("authorization"), &refusal);
    if (!principal) {
        http::writeAnswer(socket, refusal);
        return true;
    }
    if (path == QLatin1String("/mcp")) {
        m_streamable->handle(request, socket, *principal);
        return true;
    }
    if (path == QLatin1String("/sse") || path == QLatin1String("/messages")
        || path == QLatin1String("/messages/")) {
        m_legacySse->handle(request, socket, *principal);
        return true;
    }
    if (m_takenRoute && path.startsWith(m_takenPrefix)) {
        http::writeJsonRpcError(socket, 405, -32600,
                                QStringLiteral("only GET, HEAD, POST, PUT, DELETE, PATCH and "
                                               "OPTIONS are forwarded to a published port"));
        return true;
    }
    for (const auto &[prefix, route] : std::as_const(m_routes)) {
        if (path.startsWith(prefix)) {
            route(request, socket, *principal);
            return true;
        }
    }
    return false;
}

void HttpServer::addRoute(const QString &prefix, Route route)
{
    m_routes.append({prefix, std::move(route)});
}

void HttpServer::missingHandler(const QHttpServerRequest &request, QTcpSocket *socket)
{
    http::writeJsonRpcError(socket, 404, -32600,
                            QStringLiteral("no such endpoint: %1 (MCP is served at /mcp and /sse)")
                                    .arg(request.url().path()));
}

void HttpServer::writeHealth(QTcpSocket *socket)
{
    // "degraded" answers 200: the daemon serves, and a probe that restarted it would find the
    // same resource unusable again; it names what start-up found unusable and the tools that
    // cannot work for it. "draining" answers 503, so that readiness checks take this replica
    // out while its calls finish.
    const ServiceHealth &found = m_mcp.health();
    const bool draining = m_mcp.isDraining();
    const QLatin1String status = draining ? QLatin1String("draining")
            : found.degraded()            ? QLatin1String("degraded")
                                          : QLatin1String("ok");
    QJsonObject health{
            {QLatin1String("status"), status},
            {QLatin1String("version"), QStringLiteral(CMCP_VERSION)},
            {QLatin1String("sessions"), m_mcp.sessionCount()},
            {QLatin1String("time"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
            {QLatin1String("degraded"), found.toJson()}};
    const QJsonObject described = found.status();
    for (auto entry = described.begin(); entry != described.end(); ++entry)
        health.insert(entry.key(), entry.value());
    http::writeJson(socket, draining ? 503 : 200,
                    QJsonDocument(health).toJson(QJsonDocument::Compact));
}

} // namespace cmcp
