// SANDBOX_REQUIRE against fabricated probe results: unknown names, missing layers with the
// probe's reason, and the refusal line cmcpd prints.

#include "sandbox/SandboxRequirements.h"

#include <QTest>

using namespace cmcp;

namespace {

SandboxLayer layer(const char *name, SandboxLayerState state, const char *reason = "")
{
    SandboxLayer entry;
    entry.name = QString::fromLatin1(name);
    entry.state = state;
    entry.reason = QString::fromLatin1(reason);
    return entry;
}

// A machine like an unprivileged container: no root, no AppArmor, cgroups switched off.
SandboxCapabilities fabricated()
{
    SandboxCapabilities caps;
    caps.layers = {
            layer("identity", SandboxLayerState::Unavailable,
                  "not root (euid 1000): jails cannot switch to the uid pool"),
            layer("rlimits", SandboxLayerState::Available),
            layer("cgroup", SandboxLayerState::Disabled),
            layer("landlock", SandboxLayerState::Available),
            layer("seccomp", SandboxLayerState::Available),
            layer("apparmor", SandboxLayerState::Unavailable,
                  "kernel has no AppArmor (aa_is_enabled: ENOSYS)"),
    };
    return caps;
}

} // namespace

class TestSandboxRequirements : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void availableLayersPass()
    {
        const QStringList required{"rlimits", "landlock", "seccomp"};
        QCOMPARE(SandboxRequirements::unknownLayers(fabricated(), required), QString());
        QCOMPARE(SandboxRequirements::missingLayers(fabricated(), required), QStringList());
    }

    void nothingRequiredPasses()
    {
        QCOMPARE(SandboxRequirements::unknownLayers(fabricated(), {}), QString());
        QCOMPARE(SandboxRequirements::missingLayers(fabricated(), {}), QStringList());
    }

    void missingLayersCarryTheProbesReason()
    {
        const QStringList missing = SandboxRequirements::missingLayers(
                fabricated(), {"identity", "rlimits", "apparmor", "cgroup", "identity"});
        QCOMPARE(missing,
                 QStringList({"identity (not root (euid 1000): jails cannot switch to the uid "
                              "pool)",
                              "apparmor (kernel has no AppArmor (aa_is_enabled: ENOSYS))",
                              "cgroup (disabled by configuration)"}));
        QCOMPARE(SandboxRequirements::refusal(missing.mid(1, 1)),
                 QStringLiteral("SANDBOX_REQUIRE names layers this machine cannot apply: apparmor "
                                "(kernel has no AppArmor (aa_is_enabled: ENOSYS)); remove them "
                                "from SANDBOX_REQUIRE, or set SANDBOX_INSECURE=1 to run with "
                                "weaker isolation"));
    }

    void unknownLayerNamesAreNamedWithTheKnownOnes()
    {
        QCOMPARE(SandboxRequirements::unknownLayers(fabricated(), {"identity", "seccom"}),
                 QStringLiteral("SANDBOX_REQUIRE=\"identity,seccom\": unknown layer \"seccom\" "
                                "(known: identity, rlimits, cgroup, landlock, seccomp, "
                                "apparmor)"));
        QVERIFY(SandboxRequirements::unknownLayers(fabricated(), {"Seccomp", "cgroups"})
                        .contains(QStringLiteral("unknown layers \"Seccomp\", \"cgroups\"")));
        // An unknown name is not "missing": that check only judges known layers.
        QCOMPARE(SandboxRequirements::missingLayers(fabricated(), {"seccom"}), QStringList());
    }
};

QTEST_GUILESS_MAIN(TestSandboxRequirements)
#include "tst_sandboxrequirements.moc"
