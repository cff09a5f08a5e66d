#include "sandbox/JobPolicy.h"

#include <QFile>
#include <QJsonArray>

namespace cmcp {

namespace {

// Where the jail mounts the workspace and links the allowed programs (server/jail/policy.h).
const QString kWorkspaceInside = QStringLiteral("/workspace");
const QString kBinInside = QStringLiteral("/cmcp/bin");

// The layers in the jail's order; AppArmor is decided per job kind.
const char *const kLayerOrder[] = {"identity",   "rlimits",  "cgroup",
                                   "namespaces", "landlock", "seccomp"};

QJsonArray array(const QStringList &list)
{
    return QJsonArray::fromStringList(list);
}

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

QJsonObject JobPolicy::build(const JobPolicySpec &spec) const
{
    const bool namespaces = hasLayer("namespaces");
    const bool apparmor = !spec.apparmorProfile.isEmpty() && hasLayer("apparmor")
            && apparmorProfileLoaded(spec.apparmorProfile);

    QJsonObject env;
    for (const auto &[name, value] : spec.environment)
        env.insert(name, value);
    env.insert(QStringLiteral("PATH"), path(spec));

    QJsonObject limits{{QStringLiteral("processes"), kProcesses},
                       {QStringLiteral("open_files"), kOpenFiles},
                       {QStringLiteral("file_size_bytes"), kFileSizeBytes}};
    if (spec.cpuSeconds > 0)
        limits.insert(QStringLiteral("cpu_seconds"), spec.cpuSeconds);
    // Without a memory cgroup, address space is the only bound left for memory.
    if (spec.memoryBytes && !hasLayer("cgroup"))
        limits.insert(QStringLiteral("address_space_bytes"), *spec.memoryBytes);

    QJsonObject policy{
            {QStringLiteral("workspace"), m_workspace},
            {QStringLiteral("env"), env},
            {QStringLiteral("limits"), limits},
            {QStringLiteral("layers"), array(layers(apparmor))},
            {QStringLiteral("seccomp"), QJsonObject{{QStringLiteral("network"), spec.network}}}};
    if (!spec.cwd.isEmpty())
        policy.insert(QStringLiteral("cwd"), spec.cwd);

    if (hasLayer("cgroup")) {
        QJsonObject cgroup{{QStringLiteral("pids"), kProcesses}};
        if (spec.memoryBytes)
            cgroup.insert(QStringLiteral("memory_bytes"), *spec.memoryBytes);
        policy.insert(QStringLiteral("cgroup"), cgroup);
    }

    if (namespaces) {
        QJsonObject ns{{QStringLiteral("network"), spec.network},
                       {QStringLiteral("workspace_at"), kWorkspaceInside},
                       {QStringLiteral("tmp_size_mb"), kTmpSizeMb}};
        if (!spec.unrestrictedPrograms) {
            ns.insert(QStringLiteral("exec_paths"), array(spec.mappable));
            QStringList bin;
            for (const FoundProgram &program : spec.bin)
                bin.append(program.path);
            ns.insert(QStringLiteral("bin"), array(bin));
        }
        policy.insert(QStringLiteral("namespaces"), ns);
    }

    if (hasLayer("landlock")) {
        // Inside the minimal root everything readable is harmless (its /usr, a curated /etc,
        // the job's own /proc); on the host's root, only what programs need to start.
        const QStringList read = namespaces
                ? QStringList{QStringLiteral("/")}
                : QStringList{QStringLiteral("/usr"),      QStringLiteral("/etc"),
                              QStringLiteral("/lib"),      QStringLiteral("/lib64"),
                              QStringLiteral("/bin"),      QStringLiteral("/sbin"),
                              QStringLiteral("/dev/null"), QStringLiteral("/dev/urandom"),
                              QStringLiteral("/dev/zero")};
        const QStringList write = namespaces
                ? QStringList{QStringLiteral("/tmp"), QStringLiteral("/dev/shm"),
                              QStringLiteral("/dev/null")}
                : QStringList{QStringLiteral("/dev/null")};
        const QStringList execute =
                spec.unrestrictedPrograms ? QStringList{QStringLiteral("/usr")} : spec.executables;
        policy.insert(QStringLiteral("landlock"),
                      QJsonObject{{QStringLiteral("read"), array(read)},
                                  {QStringLiteral("write"), array(write)},
                                  {QStringLiteral("execute"), array(execute)},
                                  {QStringLiteral("network"), spec.network}});
    }

    if (apparmor)
        policy.insert(QStringLiteral("apparmor"),
                      QJsonObject{{QStringLiteral("profile"), spec.apparmorProfile}});
    return policy;
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
