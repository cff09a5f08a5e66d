#include "ports/PublishedPorts.h"

#include "base/UnguessableId.h"
#include "common/Settings.h"
#include "posix/ErrnoText.h"

#include <QSocketNotifier>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cmcp {

namespace {

constexpr int kSweepMs = 1000;

// The inode of a network namespace, by which two are the same one.
std::optional<ino_t> namespaceInode(int fd)
{
    struct stat status
    {
    };
    if (::fstat(fd, &status) != 0)
        return std::nullopt;
    return status.st_ino;
}

QString isoTime(const QDateTime &time)
{
    return time.toString(Qt::ISODate);
}

} // namespace

PortsLimits PortsLimits::fromSettings(const Settings &settings)
{
    PortsLimits limits;
    limits.enabled = settings.flag(u"PORTS_ENABLED");
    limits.maxPerPrincipal = int(settings.integer(u"PORTS_MAX_PER_PRINCIPAL"));
    limits.defaultSeconds = int(settings.integer(u"PORTS_DEFAULT_SECONDS"));
    limits.maxSeconds = int(settings.integer(u"PORTS_MAX_SECONDS"));
    limits.allowPublic = settings.flag(u"PORTS_ALLOW_PUBLIC");
    limits.maxConnections = int(settings.integer(u"PORTS_MAX_CONNECTIONS"));
    limits.maxBytesPerConnection = settings.integer(u"PORTS_MAX_MB") << 20;
    limits.idleSeconds = int(settings.integer(u"PORTS_IDLE_SECONDS"));
    return limits;
}

PublishedPorts::PublishedPorts(PortsLimits limits, QObject *parent)
    : QObject(parent),
      m_limits(limits)
{
    // Expired ports are forgotten (and audited) even when nobody asks for them again.
    m_sweep.setInterval(kSweepMs);
    connect(&m_sweep, &QTimer::timeout, this, &PublishedPorts::sweepExpired);
    m_sweep.start();
}

PublishedPorts::~PublishedPorts() = default;

QString PublishedPorts::urlPrefix()
{
    return QStringLiteral("/ports/");
}

std::shared_ptr<const PublishedPorts::Port>
PublishedPorts::publish(const Principal &principal, const Request &request, QString *error)
{
    if (!m_limits.enabled) {
        *error = QStringLiteral("publishing ports is turned off on this server (PORTS_ENABLED)");
        return nullptr;
    }
    if (m_base.isEmpty()) {
        *error = QStringLiteral("ports are published on the daemon's HTTP listener, and this "
                                "daemon serves stdio only");
        return nullptr;
    }
    if (request.port < 1 || request.port > 65535) {
        *error = QStringLiteral("port must be between 1 and 65535");
        return nullptr;
    }
    if (request.isPublic && !m_limits.allowPublic) {
        *error = QStringLiteral("public ports are forbidden on this server "
                                "(PORTS_ALLOW_PUBLIC=false): publish it private, reached with "
                                "your bearer token");
        return nullptr;
    }
    const int seconds = request.expiresInSeconds.value_or(m_limits.defaultSeconds);
    if (seconds < 1 || seconds > m_limits.maxSeconds) {
        *error = QStringLiteral("expires_in_seconds must be between 1 and %1 (PORTS_MAX_SECONDS)")
                         .arg(m_limits.maxSeconds);
        return nullptr;
    }
    if (portsOf(principal).size() >= m_limits.maxPerPrincipal) {
        *error = QStringLiteral("%1 ports are published already, the most one principal may "
                                "have (PORTS_MAX_PER_PRINCIPAL): revoke one with port_revoke")
                         .arg(m_limits.maxPerPrincipal);
        return nullptr;
    }
    if (request.jobPid <= 0) {
        *error = QStringLiteral("job %1 has not started its program yet; try again")
                         .arg(request.jobId);
        return nullptr;
    }
    auto port = std::make_shared<Port>();
    port->pidfd = UniqueFd(int(::syscall(SYS_pidfd_open, pid_t(request.jobPid), 0)));
    if (!port->pidfd.isValid()) {
        *error = QStringLiteral("job %1 has ended").arg(request.jobId);
        return nullptr;
    }
    const QByteArray namespacePath = "/proc/" + QByteArray::number(request.jobPid) + "/ns/net";
    port->netns = UniqueFd(::open(namespacePath.constData(), O_RDONLY | O_CLOEXEC));
    const int openErrno = errno;
    // The pid named the job's process when the pidfd was taken; if that process is still there
    // now, the namespace opened by its pid is its own and not a reused pid's.
    if (::syscall(SYS_pidfd_send_signal, port->pidfd.get(), 0, nullptr, 0) != 0) {
        *error = QStringLiteral("job %1 has ended").arg(request.jobId);
        return nullptr;
    }
    if (!port->netns.isValid()) {
        *error = QStringLiteral("cannot reach job %1's network namespace: %2")
                         .arg(request.jobId,
                              QString::fromLatin1(namespacePath) + QStringLiteral(": ")
                                      + errnoText(openErrno));
        return nullptr;
    }
    const UniqueFd own(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!own.isValid() || namespaceInode(own.get()) == namespaceInode(port->netns.get())) {
        // Its loopback would be the daemon's, with the daemon's own ports on it.
        *error = QStringLiteral("job %1 shares the daemon's network (no network namespace of "
                                "its own): its ports cannot be published")
                         .arg(request.jobId);
        return nullptr;
    }
    port->token = unguessableId("pt_");
    port->principal = principal;
    port->jobId = request.jobId;
    port->port = quint16(request.port);
    port->isPublic = request.isPublic;
    port->publishedAt = QDateTime::currentDateTimeUtc();
    port->expiresAt = port->publishedAt.addSecs(seconds);
    port->expires = QDeadlineTimer(std::chrono::seconds(seconds));
    port->exitWatch = new QSocketNotifier(port->pidfd.get(), QSocketNotifier::Read, this);
    const std::weak_ptr<Port> watched = port;
    connect(port->exitWatch, &QSocketNotifier::activated, this, [this, watched] {
        if (const std::shared_ptr<Port> ended = watched.lock())
            end(ended, QStringLiteral("job_ended"));
    });
    m_ports.insert(port->token, port);
    m_order.append(port->token);
    Q_EMIT published(record(*port, "port_published"));
    return port;
}

QList<std::shared_ptr<const PublishedPorts::Port>>
PublishedPorts::portsOf(const Principal &principal) const
{
    QList<std::shared_ptr<const Port>> found;
    for (const QString &token : m_order) {
        const std::shared_ptr<Port> &port = m_ports.value(token);
        if (port && port->principal == principal && port->live())
            found.append(port);
    }
    return found;
}

bool PublishedPorts::revoke(const Principal &principal, const QString &token)
{
    const std::shared_ptr<Port> port = find(token);
    if (!port || !(port->principal == principal))
        return false;
    end(port, QStringLiteral("revoked"));
    return true;
}

std::shared_ptr<PublishedPorts::Port> PublishedPorts::find(const QString &token) const
{
    const std::shared_ptr<Port> port = m_ports.value(token);
    return port && port->live() ? port : nullptr;
}

void PublishedPorts::end(const std::shared_ptr<Port> &port, const QString &why)
{
    if (port->revoked)
        return;
    port->revoked = true;
    // A port past its time that the sweep has not reached yet ended by expiring, whatever
    // noticed it first (its job's exit, say): the audit log says so.
    const QString reason = port->expires.hasExpired() ? QStringLiteral("expired") : why;
    if (port->exitWatch) {
        port->exitWatch->setEnabled(false);
        port->exitWatch->deleteLater();
        port->exitWatch = nullptr;
    }
    QJsonObject ending = record(*port, "port_revoked");
    ending.insert(QLatin1String("reason"), reason);
    ending.insert(QLatin1String("connections"), double(port->connections));
    ending.insert(QLatin1String("refused_connections"), double(port->refusedConnections));
    ending.insert(QLatin1String("bytes_in"), double(port->bytesIn));
    ending.insert(QLatin1String("bytes_out"), double(port->bytesOut));
    m_ports.remove(port->token);
    m_order.removeOne(port->token);
    Q_EMIT revoked(ending);
    Q_EMIT ended(port->token);
}

void PublishedPorts::sweepExpired()
{
    QList<std::shared_ptr<Port>> expired;
    for (const std::shared_ptr<Port> &port : std::as_const(m_ports)) {
        if (port->expires.hasExpired())
            expired.append(port);
    }
    for (const std::shared_ptr<Port> &port : expired)
        end(port, QStringLiteral("expired"));
}

QJsonObject PublishedPorts::record(const Port &port, const char *event) const
{
    // The token is the URL's secret: the audit log names it by its first characters only.
    return {{QLatin1String("event"), QLatin1String(event)},
            {QLatin1String("time"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
            {QLatin1String("principal"), port.principal.name()},
            {QLatin1String("token_prefix"), port.token.left(11)},
            {QLatin1String("job_id"), port.jobId},
            {QLatin1String("port"), int(port.port)},
            {QLatin1String("public"), port.isPublic},
            {QLatin1String("expires_at"), isoTime(port.expiresAt)}};
}

QJsonObject PublishedPorts::describe(const Port &port) const
{
    return {{QLatin1String("token"), port.token},
            {QLatin1String("url"), m_base + urlPrefix() + port.token + QLatin1Char('/')},
            {QLatin1String("job_id"), port.jobId},
            {QLatin1String("port"), int(port.port)},
            {QLatin1String("public"), port.isPublic},
            {QLatin1String("published_at"), isoTime(port.publishedAt)},
            {QLatin1String("expires_at"), isoTime(port.expiresAt)},
            {QLatin1String("connections"), double(port.connections)},
            {QLatin1String("open_connections"), port.openConnections},
            {QLatin1String("bytes_in"), double(port.bytesIn)},
            {QLatin1String("bytes_out"), double(port.bytesOut)}};
}

QJsonObject PublishedPorts::summary() const
{
    int live = 0;
    int open = 0;
    double connections = 0;
    double bytesIn = 0;
    double bytesOut = 0;
    for (const std::shared_ptr<Port> &port : m_ports) {
        if (!port->live())
            continue;
        ++live;
        open += port->openConnections;
        connections += double(port->connections);
        bytesIn += double(port->bytesIn);
        bytesOut += double(port->bytesOut);
    }
    return {{QLatin1String("enabled"), m_limits.enabled},
            {QLatin1String("public_allowed"), m_limits.allowPublic},
            {QLatin1String("ports"), live},
            {QLatin1String("open_connections"), open},
            {QLatin1String("connections"), connections},
            {QLatin1String("bytes_in"), bytesIn},
            {QLatin1String("bytes_out"), bytesOut}};
}

} // namespace cmcp
