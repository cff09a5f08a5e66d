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

// What a job's network is (BASH_NETWORK, PYTHON_NETWORK).
enum class JobNetwork {
    // Loopback alone, in a network namespace of its own.
    Off,
    // A network namespace of its own whose one way out is the daemon's egress gate, an HTTP
    // proxy at HTTP_PROXY/HTTPS_PROXY (kEgressPort on the job's loopback): the gate resolves
    // names and lets a connection through only to an allowed, public address. Without the
    // namespaces layer there is no namespace to give the job: it is Off then.
    Gate,
    // The host's whole network (the setting's value says how unsafe that is).
    HostUnsafe,
};

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
    JobNetwork network = JobNetwork::Off;
    std::optional<qint64> memoryBytes;
    int cpuSeconds = 0; // 0: no CPU limit
    QString cwd; // relative to the workspace
    QList<QPair<QString, QString>> environment; // without PATH, which is derived here
    QString apparmorProfile; // empty: no AppArmor layer
};

// Builds policies with every isolation layer this machine offers (jail/protocol/Policy.h), so a
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
    // Where the egress gate's proxy is on a Gate job's loopback.
    static constexpr int kEgressPort = 3128;

    // BASH_NETWORK / PYTHON_NETWORK: false, true (through the gate) or host-network-unsafe.
    static JobNetwork networkFromSetting(const QString &value);

private:
    QStringList m_available;
    QString m_workspace;
};

} // namespace cmcp
