#include "transport/HttpOptions.h"

#include "common/Settings.h"

#include <QCryptographicHash>
#include <QHostInfo>

namespace cmcp {

std::optional<HttpOptions> HttpOptions::fromSettings(const Settings &settings, QString *error)
{
    HttpOptions options;
    const QString host = settings.text(u"MCP_HOST");
    options.host = host;
    options.address = QHostAddress(host);
    if (options.address.isNull()) {
        // A host name: resolved once at start-up (blocking is fine before the event loop runs).
        const QList<QHostAddress> addresses = QHostInfo::fromName(host).addresses();
        if (!addresses.isEmpty())
            options.address = addresses.first();
    }
    options.port = quint16(settings.integer(u"MCP_PORT"));
    for (const QString &allowed : settings.list(u"MCP_ALLOWED_HOSTS"))
        options.allowedHosts.append(allowed.toLower());
    // The address the daemon was told to listen on is always a valid Host, except the
    // wildcards, which name no host a browser could be tricked into.
    if (!options.address.isNull() && options.address != QHostAddress::AnyIPv4
        && options.address != QHostAddress::AnyIPv6 && options.address != QHostAddress::Any)
        options.allowedHosts.append(host.toLower());
    options.allowedOrigins = settings.list(u"MCP_ALLOWED_ORIGINS");
    const QString token = settings.text(u"MCP_AUTH_TOKEN");
    if (!token.isEmpty())
        options.tokens.add(Principal(QStringLiteral("default")),
                           QCryptographicHash::hash(token.toUtf8(), QCryptographicHash::Sha256));
    const QString principalsFile = settings.text(u"MCP_PRINCIPALS_FILE");
    if (!principalsFile.isEmpty() && !options.tokens.addFile(principalsFile, error))
        return std::nullopt;
    options.maxBodyBytes = settings.integer(u"MCP_MAX_BODY_MB") * 1024 * 1024;
    options.keepAliveSeconds = int(settings.integer(u"MCP_SSE_KEEPALIVE_SECONDS"));
    options.maxStreamBufferBytes = settings.integer(u"MCP_SSE_MAX_BUFFER_KB") * 1024;
    options.sessionIdleSeconds = int(settings.integer(u"MCP_SESSION_IDLE_SECONDS"));
    options.headerTimeoutSeconds = int(settings.integer(u"MCP_HEADER_TIMEOUT_SECONDS"));
    options.bodyTimeoutSeconds = int(settings.integer(u"MCP_BODY_TIMEOUT_SECONDS"));
    options.bodyMinBytesPerSecond = settings.integer(u"MCP_BODY_MIN_RATE_KB") * 1024;
    options.idleTimeoutSeconds = int(settings.integer(u"MCP_IDLE_TIMEOUT_SECONDS"));
    options.bodyStallSeconds = int(settings.integer(u"MCP_BODY_STALL_SECONDS"));
    options.incompleteRequestsMaxBytes =
            settings.integer(u"MCP_INCOMPLETE_REQUESTS_MAX_MB") * 1024 * 1024;
    options.maxConnectionsPerPeer = int(settings.integer(u"MCP_MAX_CONNECTIONS_PER_PEER"));
    return options;
}

} // namespace cmcp
