#pragma once

#include "common/Settings.h"

#include <QStringList>

#include <variant>

namespace cmcp {

struct SandboxCapabilities;

// What cmcpd's command line asks of a run that goes on past parsing: where the settings come
// from, the transport, and the one-shot commands that need the settings first.
struct CommandLine
{
    SettingsSources sources;
    bool stdio = false; // --stdio (or --test-mode): MCP on stdin/stdout instead of HTTP
    bool printConfig = false;
    bool printJobPolicies = false;
};

// The run is over: the exit status of a command that needs no settings (--help, --version,
// --settings-markdown, --verify-audit) or of a command line that cannot be understood.
struct ExitStatus
{
    int status;
};

// Parses `arguments` (argv) and runs the one-shot commands that need no settings; a wrong
// command line is said on stderr, with status 2.
std::variant<ExitStatus, CommandLine> parseCommandLine(const QStringList &arguments);

// --print-config: the effective settings and where each came from. Returns the exit status.
int printConfig(const Settings &settings);

// --print-job-policies: the system tools' programs and jail policies as JSON. Returns the
// exit status.
int printJobPolicies(const Settings &settings, const SandboxCapabilities &sandbox);

} // namespace cmcp
