#pragma once

#include "sandbox/JobEgress.h"

#include <memory>

namespace cmcp {

class EgressGate;
class Settings;

// The egress gate for jobs (BASH_NETWORK / PYTHON_NETWORK true): each job's listener is served
// by an EgressProxy of its own, deciding with the web tools' gate code under the jobs' own rules
// (JOB_NETWORK_ALLOWED_DOMAINS, JOB_NETWORK_ALLOW_PRIVATE): a name is resolved once by the gate
// and the connection goes to the checked address; a CONNECT tunnel's TLS ClientHello must name
// the granted host, and the tunnel is bytes from then on, closed after EGRESS_IDLE_SECONDS
// without any.
class JobNetworkGate final : public JobEgress
{
public:
    // Connections one job may have open through the gate at once.
    static constexpr qsizetype kMaxConnectionsPerJob = 64;

    // nullptr with the reason when JOB_NETWORK_ALLOWED_DOMAINS cannot be read.
    static std::shared_ptr<JobNetworkGate> fromSettings(const Settings &settings, QString *error);
    // `idleTimeoutMs`: EGRESS_IDLE_SECONDS, in milliseconds.
    JobNetworkGate(std::shared_ptr<const EgressGate> gate, int idleTimeoutMs);

    QObject *serve(UniqueFd listener, Refused refused, QObject *parent, QString *error) override;

private:
    std::shared_ptr<const EgressGate> m_gate;
    int m_idleTimeoutMs;
};

} // namespace cmcp
