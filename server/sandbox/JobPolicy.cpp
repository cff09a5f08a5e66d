#include "sandbox/JobPolicy.h"

#include <QFile>

namespace cmcp {

namespace {

// Where the jail mounts the workspace and links the allowed programs (jail/protocol/Policy.h).
const QString kWorkspaceInside = QStringLiteral("/workspace");
const QString kBinInside = QStringLiteral("/cmcp/bin");

// The layers in the jail's order; AppArmor is decided per job kind.
const char *const kLayerOrder[] = {"identity",   "rlimits",  "cgroup",
                                   "namespaces", "landlock", "seccomp"};

} // namespace

JobPolicy::JobPolicy(const SandboxCapabilities &capabilities, QString workspace)
    : m_workspace(std::move(workspace))
{
    for (const char *name : kLayerOrder) {
        if (capabilities.isAvailable(QString::fromLatin1(name)))
            m_available.append(QLatin1String(name));
    }
    if (capabilities.isAvailable(u"apparmor"))
        m_available.append(QStringLiteral("apparmor"));
}

QStringList JobPolicy::layers(bool apparmor) const
{
    QStringList layers = m_available;
    if (!apparmor)
        layers.removeAll(QStringLiteral("apparmor"));
    return layers;
}

bool JobPolicy::hasLayer(const char *name) const
{
    return m_available.contains(QLatin1String(name));
}

QString JobPolicy::jobWorkspace() const
{
    return hasLayer("namespaces") ? kWorkspaceInside : m_workspace;
}

QString JobPolicy::path(const JobPolicySpec &spec) const
{
    if (spec.unrestrictedPrograms)
        return QStringLiteral("/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
    if (hasLayer("namespaces"))
        return kBinInside;
    // Without the minimal root there is no /cmcp/bin: the programs' own directories are on
    // PATH, and Landlock alone keeps the other programs there from starting.
    QStringList directories;
    for (const FoundProgram &program : spec.bin) {
        const QString directory = program.path.section(QLatin1Char('/'), 0, -2);
        if (!directories.contains(directory))
            directories.append(directory);
    }
    return directories.join(QLatin1Char(':'));
}

JailPolicy JobPolicy::build(const JobPolicySpec &spec) const
{
    const bool namespaces = hasLayer("namespaces");
    const bool apparmor = !spec.apparmorProfile.isEmpty() && hasLayer("apparmor")
            && apparmorProfileLoaded(spec.apparmorProfile);

    JailPolicy policy;
    policy.workspace = m_workspace.toStdString();
    policy.cwd = spec.cwd.toStdString();
    policy.env = toJailEnvironment(spec.environment);
    policy.setEnv("PATH", path(spec).toStdString());
    for (const QString &name : layers(apparmor))
        policy.layers.push_back(*jail::layerNamed(name.toStdString()));
    const JobNetwork network =
            spec.network == JobNetwork::Gate && !namespaces ? JobNetwork::Off : spec.network;
    // Through the gate the job makes TCP connections, all of them inside its own namespace.
    const bool sockets = network != JobNetwork::Off;
    policy.seccomp.network = sockets;
    if (network == JobNetwork::Gate) {
        const std::string proxy = "http://127.0.0.1:" + std::to_string(kEgressPort);
        for (const char *name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"})
            policy.setEnv(name, proxy);
    }

    // With a pids cgroup, that is the limit (it counts the forks it refuses, which the job's
    // result then names); RLIMIT_NPROC, which counts nothing, stays above it as a backstop.
    policy.limits.processes = hasLayer("cgroup") ? kProcesses + kProcesses / 4 : kProcesses;
    policy.limits.openFiles = kOpenFiles;
    policy.limits.fileSizeBytes = kFileSizeBytes;
    if (spec.cpuSeconds > 0)
        policy.limits.cpuSeconds = std::uint64_t(spec.cpuSeconds);
    // Without a memory cgroup, address space is the only bound left for memory.
    if (spec.memoryBytes && !hasLayer("cgroup"))
        policy.limits.addressSpaceBytes = std::uint64_t(*spec.memoryBytes);

    if (hasLayer("cgroup")) {
        jail::CgroupPolicy cgroup;
        cgroup.pids = kProcesses;
        if (spec.memoryBytes)
            cgroup.memoryBytes = std::uint64_t(*spec.memoryBytes);
        policy.cgroup = cgroup;
    }

    if (namespaces) {
        jail::NamespacesPolicy ns;
        ns.network = network == JobNetwork::HostUnsafe;
        if (network == JobNetwork::Gate)
            ns.egressPort = kEgressPort;
        ns.workspaceAt = kWorkspaceInside.toStdString();
        ns.tmpSizeMb = kTmpSizeMb;
        if (!spec.unrestrictedPrograms) {
            ns.execPaths = toJailStrings(spec.mappable);
            for (const FoundProgram &program : spec.bin)
                ns.bin.push_back(program.path.toStdString());
        }
        policy.namespaces = ns;
    }

    if (hasLayer("landlock")) {
        jail::LandlockPolicy landlock;
        // Inside the minimal root everything readable is harmless (its /usr, a curated /etc,
        // the job's own /proc); on the host's root, only what programs need to start.
        landlock.read = namespaces
                ? std::vector<std::string>{"/"}
                : std::vector<std::string>{"/usr",  "/etc",      "/lib",         "/lib64",   "/bin",
                                           "/sbin", "/dev/null", "/dev/urandom", "/dev/zero"};
        landlock.write = namespaces ? std::vector<std::string>{"/tmp", "/dev/shm", "/dev/null"}
                                    : std::vector<std::string>{"/dev/null"};
        landlock.execute = spec.unrestrictedPrograms ? std::vector<std::string>{"/usr"}
                                                     : toJailStrings(spec.executables);
        landlock.network = sockets;
        policy.landlock = landlock;
    }

    if (apparmor)
        policy.apparmor = jail::ApparmorPolicy{spec.apparmorProfile.toStdString()};
    return policy;
}

JobNetwork JobPolicy::networkFromSetting(const QString &value)
{
    if (value == QLatin1String("true"))
        return JobNetwork::Gate;
    if (value == QLatin1String("host-network-unsafe"))
        return JobNetwork::HostUnsafe;
    return JobNetwork::Off;
}

bool JobPolicy::apparmorProfileLoaded(const QString &profile)
{
    QFile profiles(QStringLiteral("/sys/kernel/security/apparmor/profiles"));
    if (!profiles.open(QIODevice::ReadOnly))
        return false;
    // One "name (mode)" line per loaded profile.
    const QByteArray prefix = profile.toUtf8() + " (";
    for (const QByteArray &line : profiles.readAll().split('\n')) {
        if (line.startsWith(prefix))
            return true;
    }
    return false;
}

} // namespace cmcp
