#pragma once

#include "web/BrowserPool.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

class Settings;
struct SandboxCapabilities;

// What Chromium executes besides the worker: its helper process (QtWebEngineProcess, where Qt's
// library executables are) and that program's ELF loader, by real paths beneath /usr, for the
// jail's per-file Landlock execute rule. Empty with `error` when they cannot be found.
QStringList browserExecutables(QString *error);

// The jail a root daemon's browser workers run under: WEB_BROWSER_MEMORY_MB and
// WEB_BROWSER_PIDS for the cgroup, and Landlock and seccomp where this kernel has them (a layer
// it lacks is left out and said so in the log, as the sandbox table says it for jobs). nullopt
// when the browser is not confined (WEB_BROWSER_MEMORY_MB=0).
std::optional<BrowserPool::Options::Confinement>
browserConfinement(const Settings &settings, const SandboxCapabilities &sandbox);

} // namespace cmcp
