#include "mcp/ServiceHealth.h"

#include <QJsonObject>

#include <spdlog/spdlog.h>

namespace cmcp {

void ServiceHealth::report(Degradation degradation)
{
    const QString tools = degradation.tools.isEmpty()
            ? QStringLiteral("no tool fails")
            : QStringLiteral("%1 cannot work").arg(degradation.tools.join(QStringLiteral(", ")));
    spdlog::warn("degraded: {}: {}; {}; fix: {}", degradation.resource.toStdString(),
                 degradation.problem.toStdString(), tools.toStdString(),
                 degradation.fix.toStdString());
    m_degradations.append(std::move(degradation));
}

QJsonArray ServiceHealth::toJson() const
{
    QJsonArray out;
    for (const Degradation &d : m_degradations)
        out.append(QJsonObject{{QLatin1String("resource"), d.resource},
                               {QLatin1String("problem"), d.problem},
                               {QLatin1String("fix"), d.fix},
                               {QLatin1String("tools"), QJsonArray::fromStringList(d.tools)}});
    return out;
}

QJsonObject ServiceHealth::status() const
{
    QJsonObject status = m_status;
    for (auto live = m_live.begin(); live != m_live.end(); ++live)
        status.insert(live.key(), live.value()());
    return status;
}

QJsonObject ServiceHealth::liveStatus(const QString &name) const
{
    const auto live = m_live.find(name);
    return live == m_live.end() ? QJsonObject() : live.value()();
}

} // namespace cmcp
