#pragma once

#include "sandbox/ProgramFiles.h"
#include "sandbox/SandboxProbe.h"
#include "sandbox/JailPolicy.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// What one kind of job may do; JobPolicy turns it into cmcp-jail's policy.
struct JobPolicySpec
{
    // Files execve may start. Ignored when unrestrictedPrograms is set.
    QStringList executables;
    // Files that stay mappable executable (programs, loaders, libraries). Ignored when
    // unrestrictedPrograms is set.
    QStringList mappable;
    // Every program beneath /usr may run (BASH_ALLOWED_COMMANDS=*); the job is still jailed.
    bool unrestrictedPrograms = false;
    // Programs linked into /cmcp/bin, the job's whole PATH (with the namespaces layer).
    QList<FoundProgram> bin;
    bool network = false;
    std::optional<qint64> memoryBytes;
    int cpuSeconds = 0; // 0: no CPU limit
    QString cwd; // relative to the workspace
    QList<QPair<QString, QString>> environment; // without PATH, which is derived here
    QString apparmorProfile; // empty: no AppArmor layer
};

// Builds policies with every isolation layer this machine offers (server/jail/policy.h), so a
// job is never less isolated than the machine allows. AppArmor is the exception: it is asked
// for only when the spec names a profile and the kernel has that profile loaded.
class JobPolicy
{
public:
    JobPolicy(const SandboxCapabilities &capabilities, QString workspace);

    // The layers every job gets, in the jail's names.
    QStringList layers(bool apparmor) const;
    bool hasLayer(const char *name) const;
    // The workspace as jobs see it: /workspace in the minimal root, else the host path.
    QString jobWorkspace() const;
    // The PATH a job with this spec sees.
    QString path(const JobPolicySpec &spec) const;
    // The policy without uid and gid (the supervisor adds them).
    JailPolicy build(const JobPolicySpec &spec) const;

    // Whether the kernel has an AppArmor profile of this name loaded.
    static bool apparmorProfileLoaded(const QString &profile);

    static constexpr int kProcesses = 256;
    static constexpr int kOpenFiles = 1024;
    static constexpr qint64 kFileSizeBytes = 1024LL * 1024 * 1024;
    static constexpr int kTmpSizeMb = 64;

private:
    QStringList m_available;
    QString m_workspace;
};

} // namespace cmcp
