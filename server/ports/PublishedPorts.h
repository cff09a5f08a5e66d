#pragma once

#include "mcp/Principal.h"
#include "posix/UniqueFd.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <optional>

class QSocketNotifier;

namespace cmcp {

class Settings;

// What PORTS_* allow; read once at start-up.
struct PortsLimits
{
    bool enabled = true; // PORTS_ENABLED
    int maxPerPrincipal = 8; // PORTS_MAX_PER_PRINCIPAL
    int defaultSeconds = 3600; // PORTS_DEFAULT_SECONDS
    int maxSeconds = 86400; // PORTS_MAX_SECONDS
    bool allowPublic = true; // PORTS_ALLOW_PUBLIC
    int maxConnections = 32; // PORTS_MAX_CONNECTIONS, open at once per port
    qint64 maxBytesPerConnection = qint64(256) << 20; // PORTS_MAX_MB, both ways together
    int idleSeconds = 60; // PORTS_IDLE_SECONDS
    static PortsLimits fromSettings(const Settings &settings);
};

// The registry of published ports: a TCP port on loopback inside one background job's network
// namespace, reachable from outside through the daemon's HTTP listener at /ports/<token>/ (the
// door is PortsEndpoint; this registry knows no HTTP, so that the tools that publish need no
// transport).
//
// A published port belongs to the principal whose call published it and to the job that
// listens: it holds the job's first process by a pidfd and its network namespace by a
// descriptor, so the namespace a connection enters is the job's and no other even if the pid is
// reused, and the port is revoked the moment that process ends. The token is 128 bits from the
// system's random source; an unknown, revoked or expired token is not told apart from another.
// Every publication and revocation is announced (published, revoked) for the audit log, the
// revocation with the port's traffic.
class PublishedPorts : public QObject
{
    Q_OBJECT
public:
    explicit PublishedPorts(PortsLimits limits, QObject *parent = nullptr);
    ~PublishedPorts() override;

    // Every published port's path starts with this: "/ports/".
    static QString urlPrefix();
    // Where URLs point: "http://127.0.0.1:8080" (set once the HTTP port is known; without it, as
    // on stdio, nothing is published).
    void setBase(const QString &base) { m_base = base; }
    const PortsLimits &limits() const { return m_limits; }

    // One published port and its traffic so far.
    struct Port
    {
        QString token;
        Principal principal = Principal::local();
        QString jobId;
        quint16 port = 0;
        bool isPublic = false;
        QDateTime publishedAt;
        QDateTime expiresAt;
        QDeadlineTimer expires;
        UniqueFd pidfd; // the job's first process
        UniqueFd netns; // its network namespace
        QSocketNotifier *exitWatch = nullptr;
        bool revoked = false;
        // Traffic, updated by the forwarder.
        int openConnections = 0;
        quint64 connections = 0;
        quint64 refusedConnections = 0; // over PORTS_MAX_CONNECTIONS
        qint64 bytesIn = 0; // from clients to the job's server
        qint64 bytesOut = 0; // from the job's server to clients

        bool live() const { return !revoked && !expires.hasExpired(); }
    };

    struct Request
    {
        QString jobId;
        qint64 jobPid = 0; // the job's first process, on the host
        int port = 0;
        bool isPublic = false;
        std::optional<int> expiresInSeconds; // PORTS_DEFAULT_SECONDS when absent
    };
    // Publishes a port of a running job of `principal`; refused with a reason a model can act on
    // (publishing off, public ports forbidden, the principal's cap, a job that has ended, a job
    // without a network namespace of its own).
    std::shared_ptr<const Port> publish(const Principal &principal, const Request &request,
                                        QString *error);
    // The principal's live ports, oldest first.
    QList<std::shared_ptr<const Port>> portsOf(const Principal &principal) const;
    // False when `principal` has no live port of that token (another's answers the same).
    bool revoke(const Principal &principal, const QString &token);
    // The live port of `token`, for the door: null when unknown, revoked or expired.
    std::shared_ptr<Port> find(const QString &token) const;

    // {token, url, job_id, port, public, published_at, expires_at, connections, open_connections,
    //  bytes_in, bytes_out}
    QJsonObject describe(const Port &port) const;

    // For /health and the admin channel: {enabled, public_allowed, ports, open_connections,
    // connections, bytes_in, bytes_out} over every live port, no principal or token named.
    QJsonObject summary() const;

Q_SIGNALS:
    // For the audit log: {event: "port_published"|"port_revoked", principal, token, job_id,
    // port, public, ...; the revocation also says why and the traffic}.
    void published(const QJsonObject &record);
    void revoked(const QJsonObject &record);
    // The port of `token` has ended: its open connections close.
    void ended(const QString &token);

private:
    // Ends the port: the forwarder's connections see it as revoked and close, and it is
    // forgotten. `why`: "revoked", "expired", "job_ended".
    void end(const std::shared_ptr<Port> &port, const QString &why);
    void sweepExpired();
    QJsonObject record(const Port &port, const char *event) const;

    const PortsLimits m_limits;
    QString m_base;
    QHash<QString, std::shared_ptr<Port>> m_ports; // by token
    QList<QString> m_order; // tokens, oldest first
    QTimer m_sweep;
};

} // namespace cmcp
