#include "tools/web/BrowserConfinement.h"

#include "base/InstallLayout.h"
#include "common/Settings.h"
#include "sandbox/ProgramFiles.h"
#include "sandbox/SandboxProbe.h"

#include <QFileInfo>
#include <QLibraryInfo>

#include <spdlog/spdlog.h>

namespace cmcp {

QStringList browserExecutables(QString *error)
{
    const QString helper = QLibraryInfo::path(QLibraryInfo::LibraryExecutablesPath)
            + QStringLiteral("/QtWebEngineProcess");
    const QString real = QFileInfo(helper).canonicalFilePath();
    if (real.isEmpty()) {
        *error = QStringLiteral("Chromium's helper process %1 does not exist").arg(helper);
        return {};
    }
    ProgramFiles files;
    if (!files.addProgram(real, error))
        return {};
    return files.executables();
}

std::optional<BrowserPool::Options::Confinement>
browserConfinement(const Settings &settings, const SandboxCapabilities &sandbox)
{
    if (settings.integer(u"WEB_BROWSER_MEMORY_MB") <= 0)
        return std::nullopt;
    BrowserPool::Options::Confinement confinement{
            helperProgram(QStringLiteral("cmcp-jail"), QStringLiteral("jail")),
            settings.integer(u"WEB_BROWSER_MEMORY_MB") << 20,
            settings.integer(u"WEB_BROWSER_PIDS"),
            settings.integer(u"WEB_BROWSER_MEMORY_MB")
                    * settings.integer(u"WEB_BROWSER_RETIRE_PERCENT") * (1 << 20) / 100,
            false,
            false,
            {}};
    for (const char *name : {"landlock", "seccomp"}) {
        const SandboxLayer *layer = sandbox.layer(QString::fromLatin1(name));
        const bool available = layer && layer->state == SandboxLayerState::Available;
        (std::string_view(name) == "landlock" ? confinement.landlock : confinement.seccomp) =
                available;
        if (!available)
            spdlog::warn("web_browse: the browser workers run without the {} layer: {}", name,
                         layer ? layer->reason.toStdString() : std::string("not probed"));
    }
    if (confinement.landlock) {
        QString why;
        confinement.executables = browserExecutables(&why);
        // Landlock stays: without these Chromium cannot start, and the worker says so.
        if (confinement.executables.isEmpty())
            spdlog::warn("web_browse: the browser workers' Landlock rules cannot name Chromium's "
                         "helper process: {}",
                         why.toStdString());
    }
    return confinement;
}

} // namespace cmcp
