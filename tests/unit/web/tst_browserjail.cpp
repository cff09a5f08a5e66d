// A root daemon's browser worker under cmcp-jail with the policy BrowserPool builds, the worker
// replaced by a probe (browser_jail_probe.cpp) that tries from inside what a compromised
// browser would: writes inside and outside its writable set, an exec, ptrace, and what
// /proc/self/status says of its seccomp filter and no_new_privs. The same attempts are made
// with the Landlock and seccomp layers left out, to show each refusal is theirs and not the
// mounts' or the file modes'. Runs the real cmcp-jail as root; skips otherwise, and when this
// kernel lacks a layer (with the probe's reason).

#include "sandbox/SandboxProbe.h"
#include "tools/web/BrowserConfinement.h"
#include "web/BrowserAccount.h"
#include "web/BrowserPool.h"
#include "egress/EgressGate.h"
#include "egress/EgressPolicy.h"
#include "egress/HostResolver.h"

#include <QTest>

#include <unistd.h>

using namespace cmcp;

class TestBrowserJail : public QObject
{
    Q_OBJECT

    SandboxCapabilities m_sandbox;
    std::shared_ptr<const BrowserAccount> m_account;
    std::shared_ptr<const EgressGate> m_gate;
    QStringList m_executables;

    // The probe's answer, check by check, from a worker started with these layers.
    QHash<QString, QString> probe(bool landlock, bool seccomp)
    {
        BrowserPool::Options options;
        options.program = QStringLiteral(CMCP_BROWSER_JAIL_PROBE);
        options.account = m_account;
        options.gate = m_gate;
        options.timeoutMs = 10000;
        options.confinement = BrowserPool::Options::Confinement{
                QStringLiteral(CMCP_JAIL_PATH), 256 << 20, 64, 0, landlock, seccomp, m_executables};
        BrowserPool pool(options);
        std::optional<BrowseOutcome> outcome;
        pool.browse({QUrl(QStringLiteral("http://probe/")), {}, false, false},
                    [&](const BrowseOutcome &o) { outcome = o; });
        if (!QTest::qWaitFor([&] { return outcome.has_value(); }, 30000))
            qFatal("the probe did not answer");
        if (!outcome->success)
            qFatal("the probe failed: %s", qPrintable(outcome->error));
        QHash<QString, QString> results;
        for (const QString &line : outcome->content.split(u'\n', Qt::SkipEmptyParts))
            results.insert(line.section(QStringLiteral(": "), 0, 0),
                           line.section(QStringLiteral(": "), 1));
        return results;
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (::geteuid() != 0)
            QSKIP("only a root daemon jails the browser worker; run as root");
        m_sandbox = SandboxProbe::run();
        for (const char *name : {"namespaces", "cgroup", "landlock", "seccomp"}) {
            const SandboxLayer *layer = m_sandbox.layer(QString::fromLatin1(name));
            if (!layer || layer->state != SandboxLayerState::Available)
                QSKIP(qPrintable(
                        QStringLiteral("the %1 layer is unavailable: %2")
                                .arg(QLatin1String(name),
                                     layer ? layer->reason : QStringLiteral("not probed"))));
        }
        QString error;
        m_executables = browserExecutables(&error);
        QVERIFY2(!m_executables.isEmpty(), qPrintable(error));
        // Far above the uids test daemons give their browsers.
        m_account = BrowserAccount::create(299990, 299990, &error);
        QVERIFY2(m_account, qPrintable(error));
        const std::optional<EgressPolicy> policy =
                EgressPolicy::create({{QStringLiteral("example.com")}, false, {}, false}, &error);
        QVERIFY2(policy, qPrintable(error));
        m_gate =
                std::make_shared<const EgressGate>(*policy, std::make_shared<SystemHostResolver>());
    }

    void theWorkerWritesOnlyItsHomeTmpAndSharedMemory()
    {
        const QHash<QString, QString> confined = probe(true, true);
        QCOMPARE(confined.value(QStringLiteral("write home")), QStringLiteral("ok"));
        QCOMPARE(confined.value(QStringLiteral("write /tmp")), QStringLiteral("ok"));
        QCOMPARE(confined.value(QStringLiteral("write /dev/shm")), QStringLiteral("ok"));
        QCOMPARE(confined.value(QStringLiteral("read /usr/share/fonts")), QStringLiteral("ok"));
        QCOMPARE(confined.value(QStringLiteral("read /etc/passwd")), QStringLiteral("ok"));
        QCOMPARE(confined.value(QStringLiteral("write /dev/null")), QStringLiteral("EACCES"));
        QCOMPARE(confined.value(QStringLiteral("write /proc/self/comm")), QStringLiteral("EACCES"));
        QCOMPARE(confined.value(QStringLiteral("exec /usr/bin/true")), QStringLiteral("EACCES"));
        // The same writes and the exec, without Landlock: the mounts and modes allow them.
        const QHash<QString, QString> open = probe(false, true);
        QCOMPARE(open.value(QStringLiteral("write /dev/null")), QStringLiteral("ok"));
        QCOMPARE(open.value(QStringLiteral("write /proc/self/comm")), QStringLiteral("ok"));
        QCOMPARE(open.value(QStringLiteral("exec /usr/bin/true")), QStringLiteral("ok"));
    }

    void theWorkerRunsUnderTheJobFilterWithNoNewPrivs()
    {
        const QHash<QString, QString> confined = probe(true, true);
        QCOMPARE(confined.value(QStringLiteral("Seccomp")), QStringLiteral("2"));
        QCOMPARE(confined.value(QStringLiteral("NoNewPrivs")), QStringLiteral("1"));
        QCOMPARE(confined.value(QStringLiteral("ptrace traceme")), QStringLiteral("EPERM"));
        const QHash<QString, QString> unfiltered = probe(true, false);
        QCOMPARE(unfiltered.value(QStringLiteral("Seccomp")), QStringLiteral("0"));
        QCOMPARE(unfiltered.value(QStringLiteral("ptrace traceme")), QStringLiteral("ok"));
    }
};

QTEST_GUILESS_MAIN(TestBrowserJail)
#include "tst_browserjail.moc"
