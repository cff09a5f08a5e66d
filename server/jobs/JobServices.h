#pragma once

#include <QString>

namespace cmcp {

class JobRegistry;
class OutputHandleStore;
class SandboxSupervisor;
class Settings;

// What the background-job and output-handle tools share with the system tools: the registry
// of background jobs, the handle store, and where both keep their files. The registry and the
// store are children of the McpServer.
struct JobServices
{
    SandboxSupervisor *supervisor = nullptr;
    JobRegistry *registry = nullptr;
    OutputHandleStore *handles = nullptr;
    QString fileDirectory; // <SANDBOX_ROOT>/spill: output logs and spill files, mode 0700
    qint64 outputLogCapBytes = 64LL * 1024 * 1024; // JOB_OUTPUT_MAX_MB
    int timeoutMaxSeconds = 3600; // JOB_TIMEOUT_MAX

    // <SANDBOX_ROOT>/spill, made absolute like the workspace.
    static QString fileDirectoryFromSettings(const Settings &settings);
    // Creates the directory (mode 0700) and deletes what a previous run left in it: no handle
    // or job survives a restart. A symbolic link or a directory not the daemon's at that path is
    // refused, never followed or emptied (openOwnDirectory). False with a reason naming the path
    // when it cannot.
    static bool prepareFileDirectory(const QString &directory, QString *error);
};

} // namespace cmcp
