#include "sandbox/JailPolicy.h"

#include "jail/protocol/PolicyFields.h"

#include <QJsonArray>

namespace cmcp {

namespace {

namespace field = jail_protocol::policy;

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
    insertIfSet(json, field::kCpuSeconds, limits.cpuSeconds);
    insertIfSet(json, field::kFileSizeBytes, limits.fileSizeBytes);
    insertIfSet(json, field::kOpenFiles, limits.openFiles);
    insertIfSet(json, field::kProcesses, limits.processes);
    insertIfSet(json, field::kAddressSpaceBytes, limits.addressSpaceBytes);
    return json;
}

QJsonObject landlockJson(const JailPolicy::LandlockPolicy &landlock)
{
    return QJsonObject{
            {QLatin1String(field::kRead), QJsonArray::fromStringList(landlock.read)},
            {QLatin1String(field::kExecute), QJsonArray::fromStringList(landlock.execute)},
            {QLatin1String(field::kWrite), QJsonArray::fromStringList(landlock.write)},
            {QLatin1String(field::kNetwork), landlock.network}};
}

QJsonObject namespacesJson(const JailPolicy::NamespacesPolicy &namespaces)
{
    QJsonObject json{{QLatin1String(field::kNetwork), namespaces.network}};
    insertIfSet(json, field::kEgressPort, namespaces.egressPort);
    insertIfSet(json, field::kHostname, namespaces.hostname);
    insertIfSet(json, field::kWorkspaceAt, namespaces.workspaceAt);
    insertIfSet(json, field::kTmpSizeMb, namespaces.tmpSizeMb);
    insertIfSet(json, field::kExecPaths, namespaces.execPaths);
    insertIfSet(json, field::kBin, namespaces.bin);
    if (namespaces.programFromHost)
        json.insert(QLatin1String(field::kProgramFromHost), true);
    return json;
}

QJsonObject cgroupJson(const JailPolicy::CgroupPolicy &cgroup)
{
    QJsonObject json;
    insertIfSet(json, field::kMemoryBytes, cgroup.memoryBytes);
    insertIfSet(json, field::kPids, cgroup.pids);
    insertIfSet(json, field::kCpuPercent, cgroup.cpuPercent);
    insertIfSet(json, field::kName, cgroup.name);
    return json;
}

// The first key of `object` (the policy itself, or its object under `name`) the jail does not
// know, as "<name>.<key>: unknown key"; empty when there is none.
QString unknownKeyIn(const QJsonObject &object, const char *name)
{
    const std::span<const char *const> known = field::keysOf(name);
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!field::isOneOf(known, it.key().toStdString()))
            return QStringLiteral("%1%2: unknown key")
                    .arg(*name ? QLatin1String(name) + QLatin1Char('.') : QString(), it.key());
    }
    return {};
}

} // namespace

QString unknownJailPolicyKey(const QJsonObject &policy)
{
    if (QString error = unknownKeyIn(policy, ""); !error.isEmpty())
        return error;
    for (const char *name : {field::kLimits, field::kLandlock, field::kSeccomp, field::kNamespaces,
                             field::kCgroup, field::kApparmor}) {
        if (QString error = unknownKeyIn(policy.value(QLatin1String(name)).toObject(), name);
            !error.isEmpty())
            return error;
    }
    for (const QJsonValue &layer : policy.value(QLatin1String(field::kLayers)).toArray()) {
        if (!field::isOneOf(field::kLayerNames, layer.toString().toStdString()))
            return QStringLiteral("layers: unknown layer \"%1\"").arg(layer.toString());
    }
    return {};
}

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
    QJsonObject json{{QLatin1String(field::kWorkspace), workspace},
                     {QLatin1String(field::kEnv), environment},
                     {QLatin1String(field::kLimits), limitsJson(limits)},
                     {QLatin1String(field::kLayers), QJsonArray::fromStringList(layers)}};
    // With its layer only: the jail refuses a layer's object when the layer is not requested
    // (a worker confined on a kernel without seccomp).
    if (layers.contains(QLatin1String(field::kLayerSeccomp)))
        json.insert(QLatin1String(field::kSeccomp),
                    QJsonObject{{QLatin1String(field::kNetwork), seccomp.network}});
    if (uid)
        json.insert(QLatin1String(field::kUid), qint64(*uid));
    if (gid)
        json.insert(QLatin1String(field::kGid), qint64(*gid));
    if (!cwd.isEmpty())
        json.insert(QLatin1String(field::kCwd), cwd);
    if (landlock)
        json.insert(QLatin1String(field::kLandlock), landlockJson(*landlock));
    if (namespaces)
        json.insert(QLatin1String(field::kNamespaces), namespacesJson(*namespaces));
    if (cgroup)
        json.insert(QLatin1String(field::kCgroup), cgroupJson(*cgroup));
    if (apparmor)
        json.insert(QLatin1String(field::kApparmor),
                    QJsonObject{{QLatin1String(field::kProfile), apparmor->profile}});
    return json;
}

} // namespace cmcp
