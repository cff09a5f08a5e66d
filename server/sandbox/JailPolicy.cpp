#include "sandbox/JailPolicy.h"

#include <QJsonArray>

namespace cmcp {

namespace {

void insertIfSet(QJsonObject &object, const char *key, const std::optional<qint64> &value)
{
    if (value)
        object.insert(QLatin1String(key), *value);
}

void insertIfSet(QJsonObject &object, const char *key, const std::optional<QString> &value)
{
    if (value)
        object.insert(QLatin1String(key), *value);
}

void insertIfSet(QJsonObject &object, const char *key, const std::optional<QStringList> &value)
{
    if (value)
        object.insert(QLatin1String(key), QJsonArray::fromStringList(*value));
}

QJsonObject limitsJson(const JailPolicy::Limits &limits)
{
    QJsonObject json;
    insertIfSet(json, "cpu_seconds", limits.cpuSeconds);
    insertIfSet(json, "file_size_bytes", limits.fileSizeBytes);
    insertIfSet(json, "open_files", limits.openFiles);
    insertIfSet(json, "processes", limits.processes);
    insertIfSet(json, "address_space_bytes", limits.addressSpaceBytes);
    return json;
}

QJsonObject landlockJson(const JailPolicy::LandlockPolicy &landlock)
{
    return QJsonObject{{QLatin1String("read"), QJsonArray::fromStringList(landlock.read)},
                       {QLatin1String("execute"), QJsonArray::fromStringList(landlock.execute)},
                       {QLatin1String("write"), QJsonArray::fromStringList(landlock.write)},
                       {QLatin1String("network"), landlock.network}};
}

QJsonObject namespacesJson(const JailPolicy::NamespacesPolicy &namespaces)
{
    QJsonObject json{{QLatin1String("network"), namespaces.network}};
    insertIfSet(json, "egress_port", namespaces.egressPort);
    insertIfSet(json, "hostname", namespaces.hostname);
    insertIfSet(json, "workspace_at", namespaces.workspaceAt);
    insertIfSet(json, "tmp_size_mb", namespaces.tmpSizeMb);
    insertIfSet(json, "exec_paths", namespaces.execPaths);
    insertIfSet(json, "bin", namespaces.bin);
    return json;
}

QJsonObject cgroupJson(const JailPolicy::CgroupPolicy &cgroup)
{
    QJsonObject json;
    insertIfSet(json, "memory_bytes", cgroup.memoryBytes);
    insertIfSet(json, "pids", cgroup.pids);
    insertIfSet(json, "cpu_percent", cgroup.cpuPercent);
    insertIfSet(json, "name", cgroup.name);
    return json;
}

} // namespace

void JailPolicy::setEnv(const QString &name, const QString &value)
{
    for (auto &[existing, current] : env) {
        if (existing == name) {
            current = value;
            return;
        }
    }
    env.append({name, value});
}

QString JailPolicy::envValue(const QString &name) const
{
    for (const auto &[existing, value] : env) {
        if (existing == name)
            return value;
    }
    return {};
}

QJsonObject JailPolicy::toJson() const
{
    QJsonObject environment;
    for (const auto &[name, value] : env)
        environment.insert(name, value);
    QJsonObject json{
            {QLatin1String("workspace"), workspace},
            {QLatin1String("env"), environment},
            {QLatin1String("limits"), limitsJson(limits)},
            {QLatin1String("layers"), QJsonArray::fromStringList(layers)},
            {QLatin1String("seccomp"), QJsonObject{{QLatin1String("network"), seccomp.network}}}};
    if (uid)
        json.insert(QLatin1String("uid"), qint64(*uid));
    if (gid)
        json.insert(QLatin1String("gid"), qint64(*gid));
    if (!cwd.isEmpty())
        json.insert(QLatin1String("cwd"), cwd);
    if (landlock)
        json.insert(QLatin1String("landlock"), landlockJson(*landlock));
    if (namespaces)
        json.insert(QLatin1String("namespaces"), namespacesJson(*namespaces));
    if (cgroup)
        json.insert(QLatin1String("cgroup"), cgroupJson(*cgroup));
    if (apparmor)
        json.insert(QLatin1String("apparmor"),
                    QJsonObject{{QLatin1String("profile"), apparmor->profile}});
    return json;
}

} // namespace cmcp
