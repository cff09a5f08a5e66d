#pragma once

#include "sandbox/SandboxProbe.h"

#include <QString>
#include <QStringList>

namespace cmcp {

// SANDBOX_REQUIRE against what the probe found.
class SandboxRequirements
{
public:
    // One line naming the layers the probe does not know, or empty. Always an error,
    // SANDBOX_INSECURE or not: a misspelt layer must not quietly turn a requirement off.
    static QString unknownLayers(const SandboxCapabilities &capabilities,
                                 const QStringList &required);
    // The required layers that are not available (unavailable, or disabled), each as
    // "name (why)" with the probe's reason.
    static QStringList missingLayers(const SandboxCapabilities &capabilities,
                                     const QStringList &required);
    // The start-up refusal for missingLayers(): one line, with what the operator can do.
    static QString refusal(const QStringList &missing);
};

} // namespace cmcp
