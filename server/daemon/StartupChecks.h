#pragma once

#include <QString>

namespace cmcp {

class ServiceHealth;
class Settings;
struct SandboxCapabilities;

// Start-up's look at what the tools need beyond their settings, so that the daemon never
// starts and then fails every call of a tool without having said why.
// Resources only some tools need (cmcp-jail, the HTML and browser workers, the cgroup tree):
// each unusable one is reported to `health`, which logs it once and /health lists it.
void reportUnusableResources(ServiceHealth &health, const Settings &settings,
                             const SandboxCapabilities &sandbox);

} // namespace cmcp
