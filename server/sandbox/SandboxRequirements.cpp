#include "sandbox/SandboxRequirements.h"

namespace cmcp {

QString SandboxRequirements::unknownLayers(const SandboxCapabilities &capabilities,
                                           const QStringList &required)
{
    QStringList unknown;
    for (const QString &name : required) {
        if (!capabilities.layer(name) && !unknown.contains(name))
            unknown.append(name);
    }
    if (unknown.isEmpty())
        return {};
    QStringList known;
    for (const SandboxLayer &layer : capabilities.layers)
        known.append(layer.name);
    return QStringLiteral("SANDBOX_REQUIRE=\"%1\": unknown layer%2 %3 (known: %4)")
            .arg(required.join(QLatin1Char(',')),
                 unknown.size() == 1 ? QString() : QStringLiteral("s"),
                 QLatin1Char('"') + unknown.join(QStringLiteral("\", \"")) + QLatin1Char('"'),
                 known.join(QStringLiteral(", ")));
}

QStringList SandboxRequirements::missingLayers(const SandboxCapabilities &capabilities,
                                               const QStringList &required)
{
    QStringList missing;
    QStringList seen;
    for (const QString &name : required) {
        const SandboxLayer *layer = capabilities.layer(name);
        if (!layer || layer->state == SandboxLayerState::Available || seen.contains(name))
            continue;
        seen.append(name);
        const QString why = layer->state == SandboxLayerState::Disabled
                ? QStringLiteral("disabled by configuration")
                : layer->reason;
        missing.append(QStringLiteral("%1 (%2)").arg(name, why));
    }
    return missing;
}

QString SandboxRequirements::refusal(const QStringList &missing)
{
    return QStringLiteral("SANDBOX_REQUIRE names layers this machine cannot apply: %1; remove "
                          "them from SANDBOX_REQUIRE, or set SANDBOX_INSECURE=1 to run with "
                          "weaker isolation")
            .arg(missing.join(QStringLiteral("; ")));
}

} // namespace cmcp
