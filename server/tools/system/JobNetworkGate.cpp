#include "tools/system/JobNetworkGate.h"

#include "common/Settings.h"
#include "egress/EgressGate.h"
#include "egress/EgressProxy.h"

#include <limits>

namespace cmcp {

std::shared_ptr<JobNetworkGate> JobNetworkGate::fromSettings(const Settings &settings,
                                                             QString *error)
{
    EgressPolicy::Options options;
    options.allowedDomains = settings.list(u"JOB_NETWORK_ALLOWED_DOMAINS");
    options.allowPrivate = settings.flag(u"JOB_NETWORK_ALLOW_PRIVATE");
    options.settingPrefix = QStringLiteral("JOB_NETWORK");
    QString why;
    std::optional<EgressPolicy> policy = EgressPolicy::create(options, &why);
    if (!policy) {
        *error = QStringLiteral("JOB_NETWORK_ALLOWED_DOMAINS: ") + why;
        return nullptr;
    }
    return std::make_shared<JobNetworkGate>(
            std::make_shared<const EgressGate>(std::move(*policy),
                                               std::make_shared<SystemHostResolver>()),
            int(settings.integer(u"EGRESS_IDLE_SECONDS") * 1000));
}

JobNetworkGate::JobNetworkGate(std::shared_ptr<const EgressGate> gate, int idleTimeoutMs)
    : m_gate(std::move(gate)),
      m_idleTimeoutMs(idleTimeoutMs)
{
}

QObject *JobNetworkGate::serve(UniqueFd listener, Refused refused, QObject *parent, QString *error)
{
    EgressProxy::Options options;
    // A job downloads what it needs (packages, archives): its time limit bounds it, not a size.
    options.maxResponseBytes = std::numeric_limits<qint64>::max();
    options.maxConnections = kMaxConnectionsPerJob;
    options.idleTimeoutMs = m_idleTimeoutMs;
    auto *proxy = new EgressProxy(m_gate, options, parent);
    if (!proxy->serveListening(listener.get())) {
        *error = QStringLiteral("the job's egress listener cannot be served");
        delete proxy;
        return nullptr;
    }
    (void)listener.release(); // the proxy's server closes it now
    QObject::connect(proxy, &EgressProxy::refused, proxy, std::move(refused));
    return proxy;
}

} // namespace cmcp
