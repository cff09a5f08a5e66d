#pragma once

#include "daemon/DaemonMain.h"
#include "sandbox/SandboxProbe.h"

class QCoreApplication;

namespace cmcp {

class Settings;
class WorkspaceVolume;
struct CommandLine;

// Once at start-up: what this machine offers every jail, and the workspace volume's quota as
// the layer "quota", logged one line per layer.
SandboxCapabilities probeSandbox(const WorkspaceVolume &volume, const Settings &settings);

// SANDBOX_REQUIRE against the probe: a misspelt layer (2, a bad setting) or a required layer
// the machine lacks (1) stops start-up with one line, unless SANDBOX_INSECURE accepts the
// weaker isolation, which is then said loudly here and in every job result. 0: carry on.
int checkSandboxRequirements(const SandboxCapabilities &sandbox, const Settings &settings);

// Builds the server the settings describe (the tool families, the audit log, what `addToServer`
// adds, the admin channel, the transport) and runs it until a termination signal or, on stdio,
// the end of input. Returns the exit status.
int runServer(QCoreApplication &app, const CommandLine &commandLine, const Settings &settings,
              const SandboxCapabilities &sandbox, const WorkspaceVolume &volume,
              const ServerAdditions &addToServer);

} // namespace cmcp
