// The daemon's start-up in order. Its pieces: CommandLine (parsing and the one-shot commands),
// EventLoopChoice (which event dispatcher runs the main thread), ProcessSetup (what the daemon
// changes about its POSIX process) and ServerWiring (the tool families, the audit log, the
// admin channel and the transports).

#include "daemon/DaemonMain.h"

#include "daemon/CommandLine.h"
#include "base/Logging.h"
#include "daemon/EventLoopChoice.h"
#include "daemon/ProcessSetup.h"
#include "daemon/ServerWiring.h"
#include "common/Settings.h"
#include "workspace/WorkspaceVolume.h"
#include "daemon/StartupFailure.h"

#include <QCoreApplication>

namespace cmcp {

int runDaemon(int argc, char *argv[], const ServerAdditions &addToServer)
{
    keepLargeBuffersOnHeap();
    const QString eventDispatcher = installEventDispatcher();

    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("cmcpd"));
    QCoreApplication::setApplicationVersion(QStringLiteral(CMCP_VERSION));
    watchTerminationSignals(app);

    const std::variant<ExitStatus, CommandLine> parsed = parseCommandLine(app.arguments());
    if (const auto *exit = std::get_if<ExitStatus>(&parsed))
        return exit->status;
    const CommandLine &commandLine = std::get<CommandLine>(parsed);

    QString error;
    const std::optional<Settings> settings = Settings::load(commandLine.sources, &error);
    if (!settings)
        return startupFailure(2, error);
    if (commandLine.printConfig)
        return printConfig(*settings);
    setupLogging(settings->text(u"LOG_LEVEL"),
                 settings->text(u"LOG_FORMAT") == QLatin1String("json"));
    warnIfEventDispatcherDiffers(*settings, eventDispatcher);

    // Before anything resolves a workspace: with a quota, workspaces live on this volume.
    const WorkspaceVolume volume = WorkspaceVolume::prepare(*settings);
    const SandboxCapabilities sandbox = probeSandbox(volume, *settings);
    if (const int refused = checkSandboxRequirements(sandbox, *settings))
        return refused;
    if (commandLine.printJobPolicies)
        return printJobPolicies(*settings, sandbox);

    raiseDescriptorLimit();
    return runServer(app, commandLine, *settings, sandbox, volume, addToServer);
}

} // namespace cmcp
