#pragma once

#include <QString>

namespace cmcp {

class ServiceHealth;
class Settings;
struct SandboxCapabilities;

// Start-up's look at what the tools need beyond their settings, so that the daemon never
// starts and then fails every call of a tool without having said why.
// A layout in which no job can run: a refusal (one line naming the directory, its mode and the
// fix); empty when jobs can run.
QString jobLayoutRefusal(const Settings &settings, const SandboxCapabilities &sandbox);
// Caps under which one principal could take every background job slot while MCP_PRINCIPALS_FILE
// names others: a refusal naming the settings and their values; empty when they leave a share.
QString principalShareRefusal(const Settings &settings);
// Resources only some tools need (cmcp-jail, the HTML and browser workers, the browser's home,
// the cgroup tree): each unusable one is reported to `health`, which logs it once and /health
// lists it.
void reportUnusableResources(ServiceHealth &health, const Settings &settings,
                             const SandboxCapabilities &sandbox);

} // namespace cmcp
