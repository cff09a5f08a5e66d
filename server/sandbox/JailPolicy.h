#pragma once

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <sys/types.h>

#include <optional>

namespace cmcp {

// The policy cmcp-jail reads, as the daemon holds it: the jail's own structs (jail/
// policy.h, whose comments say what each field does) with the same fields under the same names,
// in Qt's types. The daemon edits these fields and never the JSON: toJson() is the one place that
// writes the jail's keys, by the names the jail's parser reads too (jail/protocol/PolicyFields.h).
// An optional field that is not set is left out, so the jail applies its default.
struct JailPolicy
{
    struct Limits
    {
        std::optional<qint64> cpuSeconds;
        std::optional<qint64> fileSizeBytes;
        std::optional<qint64> openFiles;
        std::optional<qint64> processes;
        std::optional<qint64> addressSpaceBytes;
        bool operator==(const Limits &) const = default;
    };

    struct LandlockPolicy
    {
        QStringList read, execute, write;
        bool network = false;
        bool operator==(const LandlockPolicy &) const = default;
    };

    struct SeccompPolicy
    {
        bool network = false;
        bool operator==(const SeccompPolicy &) const = default;
    };

    struct NamespacesPolicy
    {
        bool network = false;
        std::optional<qint64> egressPort; // the job's way out through the daemon (--egress-fd)
        std::optional<QString> hostname;
        std::optional<QString> workspaceAt;
        std::optional<qint64> tmpSizeMb;
        std::optional<QStringList> execPaths;
        std::optional<QStringList> bin;
        // The program is named by its host path and held before the minimal root is built
        // (a build tree's program outside /usr); written only when set.
        bool programFromHost = false;
        bool operator==(const NamespacesPolicy &) const = default;
    };

    struct CgroupPolicy
    {
        std::optional<qint64> memoryBytes;
        std::optional<qint64> pids;
        std::optional<qint64> cpuPercent;
        std::optional<QString> name;
        bool operator==(const CgroupPolicy &) const = default;
    };

    struct ApparmorPolicy
    {
        QString profile;
        bool operator==(const ApparmorPolicy &) const = default;
    };

    // Unset until the supervisor gives the job a uid of its pool.
    std::optional<uid_t> uid;
    std::optional<gid_t> gid;
    QString workspace; // absolute
    QString cwd; // relative to workspace; empty: the workspace itself
    QList<QPair<QString, QString>> env; // the job's whole environment; a later name wins
    Limits limits;
    SeccompPolicy seccomp; // written when "seccomp" is in layers
    std::optional<LandlockPolicy> landlock;
    std::optional<NamespacesPolicy> namespaces;
    std::optional<CgroupPolicy> cgroup;
    std::optional<ApparmorPolicy> apparmor;
    QStringList layers; // in the jail's names

    // Sets `name` in env, replacing its value where it is already there.
    void setEnv(const QString &name, const QString &value);
    // The value of `name` in env; null when it is not set.
    QString envValue(const QString &name) const;

    // The JSON cmcp-jail parses.
    QJsonObject toJson() const;

    bool operator==(const JailPolicy &) const = default;
};

// Empty when every key of `policy`, and every name in its "layers", is one cmcp-jail knows
// (jail/protocol/PolicyFields.h); otherwise one line naming the first that is not, as the jail
// would ("namespaces.egress: unknown key"). The daemon checks each policy with it before a jail
// starts: a key the jail would refuse is the daemon's own error, caught on its side.
QString unknownJailPolicyKey(const QJsonObject &policy);

} // namespace cmcp
