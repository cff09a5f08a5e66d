#include "mcp/PrincipalProfiles.h"

#include <spdlog/spdlog.h>

#include <cmath>

namespace cmcp {

bool PrincipalProfiles::load(const QString &path, QString *error)
{
    std::optional<PrincipalPolicy> policy = PrincipalPolicy::read(path, error);
    if (!policy || !apply(std::move(*policy), error))
        return false;
    m_path = path;
    return true;
}

bool PrincipalProfiles::reload(QString *error)
{
    if (m_path.isEmpty()) {
        *error = QStringLiteral("no MCP_POLICY_FILE is set: there is no policy to reload");
        return false;
    }
    std::optional<PrincipalPolicy> policy = PrincipalPolicy::read(m_path, error);
    if (!policy || !apply(std::move(*policy), error)) {
        spdlog::error("policy: reload failed, the policy in force stays: {}", error->toStdString());
        Q_EMIT reloadFailed(m_path, *error);
        return false;
    }
    spdlog::info("policy: reloaded {}: {} profiles, {} principals", m_path.toStdString(),
                 m_policy->profiles.size(), m_policy->principals.size());
    Q_EMIT reloaded(m_path, int(m_policy->profiles.size()), int(m_policy->principals.size()));
    return true;
}

bool PrincipalProfiles::apply(PrincipalPolicy policy, QString *error)
{
    if (!m_knownTools.isEmpty()) {
        for (const Profile &profile : std::as_const(policy.profiles)) {
            for (const QString &tool : profile.tools.value_or(QStringList())) {
                if (!m_knownTools.contains(tool)) {
                    *error = QStringLiteral("MCP_POLICY_FILE %1: [profile %2] tools: no tool "
                                            "'%3' on this server")
                                     .arg(policy.path, profile.name, tool);
                    return false;
                }
            }
        }
    }
    for (const PolicyPrincipal &principal : std::as_const(policy.principals)) {
        if (m_namesTaken.contains(principal.name)) {
            *error = QStringLiteral("MCP_POLICY_FILE %1: [principal %2]: the name is given "
                                    "already by MCP_AUTH_TOKEN or MCP_PRINCIPALS_FILE")
                             .arg(policy.path, principal.name);
            return false;
        }
    }
    m_policy = std::make_shared<const PrincipalPolicy>(std::move(policy));
    // A bucket keeps what it holds, up to its new size; a principal without a rate has none.
    for (auto bucket = m_buckets.begin(); bucket != m_buckets.end();) {
        const std::shared_ptr<const Profile> profile = profileOf(bucket.key());
        if (!profile || !profile->callRate) {
            bucket = m_buckets.erase(bucket);
            continue;
        }
        bucket->tokens = std::min(bucket->tokens, profile->callRate->burst);
        ++bucket;
    }
    return true;
}

std::shared_ptr<const Profile> PrincipalProfiles::profileOf(const QString &principal) const
{
    if (!m_policy)
        return nullptr;
    const PolicyPrincipal *entry = m_policy->principal(principal);
    if (!entry || entry->profile.isEmpty())
        return nullptr;
    const auto found = m_policy->profiles.constFind(entry->profile);
    if (found == m_policy->profiles.cend())
        return nullptr;
    // Shares the policy's lifetime: a reload while the caller holds it frees nothing.
    return std::shared_ptr<const Profile>(m_policy, &found.value());
}

QString PrincipalProfiles::profileName(const QString &principal) const
{
    const std::shared_ptr<const Profile> profile = profileOf(principal);
    return profile ? profile->name : QStringLiteral("default");
}

bool PrincipalProfiles::offersTool(const QString &principal, const QString &tool) const
{
    const std::shared_ptr<const Profile> profile = profileOf(principal);
    return !profile || !profile->tools || profile->tools->contains(tool);
}

qint64 PrincipalProfiles::takeCall(const QString &principal)
{
    const std::shared_ptr<const Profile> profile = profileOf(principal);
    if (!profile || !profile->callRate)
        return 0;
    const CallRate rate = *profile->callRate;
    if (!m_clock.isValid())
        m_clock.start();
    const qint64 now = m_clock.elapsed();
    auto bucket = m_buckets.find(principal);
    if (bucket == m_buckets.end())
        bucket = m_buckets.insert(principal, Bucket{rate.burst, now});
    bucket->tokens =
            std::min(rate.burst,
                     bucket->tokens + double(now - bucket->refilledAtMs) / 1000.0 * rate.perSecond);
    bucket->refilledAtMs = now;
    if (bucket->tokens >= 1.0) {
        bucket->tokens -= 1.0;
        return 0;
    }
    return std::max<qint64>(1, qint64(std::ceil((1.0 - bucket->tokens) / rate.perSecond * 1000)));
}

} // namespace cmcp
