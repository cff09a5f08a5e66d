// The policies handed to the jail, built from the layers a machine offers, without running it.

#include "sandbox/JobPolicy.h"
#include "sandbox/ProgramFiles.h"
#include "sandbox/SandboxProbe.h"

#include <QJsonArray>
#include <QTest>

using namespace cmcp;

namespace {

SandboxCapabilities machineWith(const QStringList &layers)
{
    SandboxCapabilities capabilities;
    for (const char *name :
         {"identity", "rlimits", "cgroup", "namespaces", "landlock", "seccomp", "apparmor"}) {
        SandboxLayer layer;
        layer.name = QLatin1String(name);
        layer.state = layers.contains(layer.name) ? SandboxLayerState::Available
                                                  : SandboxLayerState::Unavailable;
        capabilities.layers.append(layer);
    }
    return capabilities;
}

QStringList strings(const QJsonValue &value)
{
    QStringList list;
    for (const QJsonValue &item : value.toArray())
        list.append(item.toString());
    return list;
}

const QStringList kAllButApparmor{"identity",   "rlimits",  "cgroup",
                                  "namespaces", "landlock", "seccomp"};

} // namespace

class TestJobPolicy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void policyUsesEveryAvailableLayerAndNamesFiles()
    {
        const JobPolicy builder(machineWith(kAllButApparmor), QStringLiteral("/srv/ws"));
        JobPolicySpec spec;
        spec.executables = {QStringLiteral("/usr/bin/bash"), QStringLiteral("/usr/bin/ls")};
        spec.mappable = spec.executables + QStringList{QStringLiteral("/usr/lib/libc.so.6")};
        spec.bin = {FoundProgram{QStringLiteral("ls"), QStringLiteral("/usr/bin/ls"),
                                 QStringLiteral("/usr/bin/ls")}};
        spec.memoryBytes = 64 * 1024 * 1024;
        spec.cwd = QStringLiteral("sub");
        const QJsonObject policy = jailPolicyObject(builder.build(spec));
        QCOMPARE(strings(policy[u"layers"]), kAllButApparmor);
        QCOMPARE(policy[u"workspace"].toString(), QStringLiteral("/srv/ws"));
        QCOMPARE(policy[u"cwd"].toString(), QStringLiteral("sub"));
        QCOMPARE(policy[u"env"][u"PATH"].toString(), QStringLiteral("/cmcp/bin"));
        QCOMPARE(strings(policy[u"landlock"][u"execute"]), spec.executables);
        QCOMPARE(policy[u"landlock"][u"network"].toBool(true), false);
        QCOMPARE(strings(policy[u"namespaces"][u"exec_paths"]), spec.mappable);
        QCOMPARE(strings(policy[u"namespaces"][u"bin"]), QStringList{"/usr/bin/ls"});
        QCOMPARE(policy[u"namespaces"][u"network"].toBool(true), false);
        QCOMPARE(policy[u"seccomp"][u"network"].toBool(true), false);
        QCOMPARE(policy[u"cgroup"][u"memory_bytes"].toInteger(), 64 * 1024 * 1024);
        // The cgroup bounds memory: no address-space limit that would break big reservations.
        QVERIFY(!policy[u"limits"].toObject().contains(QLatin1String("address_space_bytes")));
        QCOMPARE(builder.jobWorkspace(), QStringLiteral("/workspace"));
    }

    void policyWithoutNamespacesOrCgroupFallsBack()
    {
        const JobPolicy builder(machineWith({"identity", "rlimits", "landlock", "seccomp"}),
                                QStringLiteral("/srv/ws"));
        JobPolicySpec spec;
        spec.executables = {QStringLiteral("/usr/bin/bash")};
        spec.bin = {FoundProgram{QStringLiteral("ls"), QStringLiteral("/usr/bin/ls"),
                                 QStringLiteral("/usr/bin/ls")}};
        spec.memoryBytes = 64 * 1024 * 1024;
        const QJsonObject policy = jailPolicyObject(builder.build(spec));
        QVERIFY(!policy.contains(QLatin1String("namespaces")));
        QVERIFY(!policy.contains(QLatin1String("cgroup")));
        QCOMPARE(policy[u"env"][u"PATH"].toString(), QStringLiteral("/usr/bin"));
        QCOMPARE(policy[u"limits"][u"address_space_bytes"].toInteger(), 64 * 1024 * 1024);
        QVERIFY(!strings(policy[u"landlock"][u"read"]).contains(QStringLiteral("/")));
        QCOMPARE(builder.jobWorkspace(), QStringLiteral("/srv/ws"));
    }

    void unrestrictedProgramsExecuteBeneathUsr()
    {
        const JobPolicy builder(machineWith(kAllButApparmor), QStringLiteral("/srv/ws"));
        JobPolicySpec spec;
        spec.unrestrictedPrograms = true;
        spec.network = JobNetwork::HostUnsafe;
        const QJsonObject policy = jailPolicyObject(builder.build(spec));
        QCOMPARE(strings(policy[u"landlock"][u"execute"]), QStringList{"/usr"});
        QVERIFY(!policy[u"namespaces"].toObject().contains(QLatin1String("exec_paths")));
        QVERIFY(policy[u"env"][u"PATH"].toString().contains(QLatin1String("/usr/bin")));
        QCOMPARE(policy[u"namespaces"][u"network"].toBool(), true);
        QCOMPARE(policy[u"landlock"][u"network"].toBool(), true);
    }

    // BASH_NETWORK=true: the job's own namespace, whose one way out is the egress listener,
    // named in the proxy variables; without the namespaces layer no network at all.
    void aGateNetworkIsTheJobsOwnNamespaceWithTheProxy()
    {
        QCOMPARE(JobPolicy::networkFromSetting(QStringLiteral("true")), JobNetwork::Gate);
        QCOMPARE(JobPolicy::networkFromSetting(QStringLiteral("host-network-unsafe")),
                 JobNetwork::HostUnsafe);
        QCOMPARE(JobPolicy::networkFromSetting(QStringLiteral("false")), JobNetwork::Off);
        JobPolicySpec spec;
        spec.network = JobNetwork::Gate;
        const QJsonObject policy = jailPolicyObject(
                JobPolicy(machineWith(kAllButApparmor), QStringLiteral("/srv/ws")).build(spec));
        QCOMPARE(policy[u"namespaces"][u"network"].toBool(true), false);
        QCOMPARE(policy[u"namespaces"][u"egress_port"].toInt(), JobPolicy::kEgressPort);
        QCOMPARE(policy[u"seccomp"][u"network"].toBool(), true);
        QCOMPARE(policy[u"landlock"][u"network"].toBool(), true);
        for (const char *name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"})
            QCOMPARE(policy[u"env"][QLatin1String(name)].toString(),
                     QStringLiteral("http://127.0.0.1:3128"));

        const QJsonObject without = jailPolicyObject(
                JobPolicy(machineWith({"identity", "rlimits", "landlock", "seccomp"}),
                          QStringLiteral("/srv/ws"))
                        .build(spec));
        QCOMPARE(without[u"seccomp"][u"network"].toBool(true), false);
        QCOMPARE(without[u"landlock"][u"network"].toBool(true), false);
        QVERIFY(!without[u"env"].toObject().contains(QLatin1String("HTTP_PROXY")));
    }

    // AppArmor is asked for only when a loaded profile is named (none is loaded on a kernel
    // without AppArmor, as here).
    void apparmorOnlyWithALoadedProfile()
    {
        const JobPolicy builder(machineWith(kAllButApparmor + QStringList{"apparmor"}),
                                QStringLiteral("/srv/ws"));
        JobPolicySpec spec;
        QVERIFY(!strings(jailPolicyObject(builder.build(spec))[u"layers"])
                         .contains(QStringLiteral("apparmor")));
        spec.apparmorProfile = QStringLiteral("cmcp-no-such-profile");
        QVERIFY(!strings(jailPolicyObject(builder.build(spec))[u"layers"])
                         .contains(QStringLiteral("apparmor")));
    }
};

QTEST_GUILESS_MAIN(TestJobPolicy)
#include "tst_jobpolicy.moc"
