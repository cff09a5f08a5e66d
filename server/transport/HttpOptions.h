#pragma once

#include "transport/BearerTokens.h"

#include <QHostAddress>
#include <QStringList>

#include <optional>

namespace cmcp {

class Settings;

// What the HTTP door enforces, taken from the settings once at start-up.
struct HttpOptions
{
    QString host = QStringLiteral("127.0.0.1"); // as configured, for messages
    QHostAddress address = QHostAddress::LocalHost; // null when the name did not resolve
    quint16 port = 8000;
    QStringList allowedHosts; // Host header names, lower case, without port
    QStringList allowedOrigins; // exact origins; empty = origins whose host is allowed
    BearerTokens tokens; // none = no authentication
    qint64 maxBodyBytes = 32 * 1024 * 1024;
    int keepAliveSeconds = 15;
    qint64 maxStreamBufferBytes = 1024 * 1024;
    int sessionIdleSeconds = 3600;
    // Deadlines against clients that hold connections by sending slowly (slow loris).
    int headerTimeoutSeconds = 10;
    int bodyTimeoutSeconds = 30;
    qint64 bodyMinBytesPerSecond = 64 * 1024;
    int idleTimeoutSeconds = 60;
    // A body from which no byte arrives for this long is cut off (408), however fast it came
    // before: a client cannot stall one byte short of the end.
    int bodyStallSeconds = 10;
    // Bytes all requests still arriving may hold together; beyond it the request that would
    // take more is refused (503).
    qint64 incompleteRequestsMaxBytes = qint64(128) * 1024 * 1024;
    // Open connections from one peer address; more are refused (503).
    int maxConnectionsPerPeer = 2048;

    // Null with `error` set when a setting cannot be used (an unreadable principals file).
    static std::optional<HttpOptions> fromSettings(const Settings &settings, QString *error);
};

} // namespace cmcp
