// Each probed value is checked against a second, independent source on the same machine, so
// the test holds both here (no AppArmor, hybrid cgroups) and on an Ubuntu host with AppArmor.

#include "sandbox/SandboxProbe.h"

#include <QFile>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

#include <linux/openat2.h>
#include <sys/syscall.h>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

using namespace cmcp;

namespace {

const QStringList kLayers{
        QStringLiteral("identity"), QStringLiteral("rlimits"),    QStringLiteral("cgroup"),
        QStringLiteral("userns"),   QStringLiteral("namespaces"), QStringLiteral("openat2"),
        QStringLiteral("landlock"), QStringLiteral("seccomp"),    QStringLiteral("apparmor")};

struct Run
{
    int exitCode = -1;
    QString output;
};

Run runCommand(const QString &program, const QStringList &arguments)
{
    QProcess process;
    process.start(program, arguments);
    if (!process.waitForFinished(10000) || process.exitStatus() != QProcess::NormalExit)
        return {};
    return {process.exitCode(), QString::fromLocal8Bit(process.readAllStandardOutput()).trimmed()};
}

QString readText(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromLatin1(file.readAll()).trimmed()
                                          : QString();
}

// "Name:\tvalue" from /proc/self/status; a null string when the line is absent.
QString statusField(const QString &name)
{
    for (const QString &line :
         readText(QStringLiteral("/proc/self/status")).split(QLatin1Char('\n'))) {
        if (line.startsWith(name + QLatin1Char(':')))
            return line.mid(name.size() + 1).trimmed();
    }
    return {};
}

QString namespaceOf(const char *kind)
{
    return QFile::symLinkTarget(QStringLiteral("/proc/self/ns/") + QLatin1String(kind));
}

} // namespace

class TestSandboxProbe : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_caps = SandboxProbe::run();
        qInfo().noquote() << '\n' + m_caps.table();
    }

    void reportsEveryLayerOnce()
    {
        QCOMPARE(m_caps.layers.size(), kLayers.size());
        for (const QString &name : kLayers) {
            QVERIFY2(m_caps.layer(name), qPrintable(name));
            const SandboxLayer &entry = *m_caps.layer(name);
            // Unavailable always says why; available never carries a stale reason.
            QCOMPARE(entry.reason.isEmpty(), entry.state == SandboxLayerState::Available);
        }
    }

    void tableNamesEveryLayerInAlignedColumns()
    {
        const QStringList lines = m_caps.table().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), kLayers.size() + 1);
        const qsizetype stateColumn = lines.first().indexOf(QLatin1String("state"));
        QVERIFY(stateColumn > 0);
        for (const QString &name : kLayers) {
            const auto line = std::find_if(lines.cbegin(), lines.cend(), [&](const QString &l) {
                return l.startsWith(name + QLatin1Char(' '));
            });
            QVERIFY2(line != lines.cend(), qPrintable(name));
            const QString state = line->mid(stateColumn).section(QLatin1Char(' '), 0, 0);
            QVERIFY2(state == QLatin1String("available") || state == QLatin1String("unavailable"),
                     qPrintable(*line));
        }
    }

    void jsonHasEveryLayer()
    {
        const QJsonObject json = m_caps.toJson();
        const QJsonObject layers = json.value(QLatin1String("layers")).toObject();
        QCOMPARE(layers.size(), kLayers.size());
        for (const QString &name : kLayers) {
            const QJsonObject layer = layers.value(name).toObject();
            QVERIFY2(!layer.isEmpty(), qPrintable(name));
            QCOMPARE(layer.value(QLatin1String("state")).toString(),
                     sandboxLayerStateName(m_caps.layer(name)->state));
        }
        QCOMPARE(json.value(QLatin1String("landlockAbi")).toInt(), m_caps.landlockAbi);
        QCOMPARE(json.value(QLatin1String("cgroupMode")).toString(),
                 cgroupModeName(m_caps.cgroupMode));
    }

    void landlockAgreesWithLsmList()
    {
        QString lsm = readText(QStringLiteral("/sys/kernel/security/lsm"));
        if (lsm.isEmpty()) {
            // securityfs is not mounted in some containers: mount it in a throw-away mount
            // namespace.
            lsm = runCommand(QStringLiteral("unshare"),
                             {QStringLiteral("-m"), QStringLiteral("sh"), QStringLiteral("-c"),
                              QStringLiteral("mount -t securityfs none /sys/kernel/security && cat "
                                             "/sys/kernel/security/lsm")})
                          .output;
        }
        if (lsm.isEmpty())
            QSKIP("no readable /sys/kernel/security/lsm to compare with");
        const bool listed = lsm.split(QLatin1Char(',')).contains(QLatin1String("landlock"));
        QCOMPARE(m_caps.landlockAbi > 0, listed);
        QCOMPARE(m_caps.isAvailable(u"landlock"), listed);
    }

    void appArmorAgreesWithModuleParameter()
    {
        const bool enabled = readText(QStringLiteral("/sys/module/apparmor/parameters/enabled"))
                == QLatin1String("Y");
        const SandboxLayer &layer = *m_caps.layer(u"apparmor");
        if (enabled && layer.state != SandboxLayerState::Available) {
            // Enabled in the kernel but securityfs not mounted (a container): libapparmor says
            // ENOENT.
            QVERIFY2(layer.reason.contains(QLatin1String("ENOENT")), qPrintable(layer.reason));
        } else {
            QCOMPARE(layer.state == SandboxLayerState::Available, enabled);
        }
        if (!enabled)
            QVERIFY2(layer.reason.contains(QLatin1String("aa_is_enabled: E")),
                     qPrintable(layer.reason));
    }

    void openat2AgreesWithDirectSyscall()
    {
        // A different escape than the probe's: an absolute path from /, which must give EXDEV.
        const int root = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        QVERIFY(root >= 0);
        open_how how{};
        how.flags = O_RDONLY | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH;
        const long inside = syscall(437, root, "proc/self/status", &how, sizeof how);
        if (inside >= 0)
            ::close(int(inside));
        const long escape = syscall(437, root, "/proc/self/status", &how, sizeof how);
        const int escapeErrno = errno;
        if (escape >= 0)
            ::close(int(escape));
        ::close(root);
        const bool works = inside >= 0 && escape < 0 && escapeErrno == EXDEV;
        QCOMPARE(m_caps.isAvailable(u"openat2"), works);
    }

    void userNamespacesAgreeWithUnshareCommand()
    {
        const Run run = runCommand(QStringLiteral("unshare"),
                                   {QStringLiteral("-U"), QStringLiteral("true")});
        if (run.exitCode < 0)
            QSKIP("unshare(1) did not run");
        QCOMPARE(m_caps.isAvailable(u"userns"), run.exitCode == 0);
    }

    void probeLeavesOwnNamespacesAlone()
    {
        const QString user = namespaceOf("user"), mount = namespaceOf("mnt"),
                      net = namespaceOf("net");
        SandboxProbe::run();
        QCOMPARE(namespaceOf("user"), user);
        QCOMPARE(namespaceOf("mnt"), mount);
        QCOMPARE(namespaceOf("net"), net);
    }

    void cgroupModeAgreesWithStat()
    {
        const QString top = runCommand(QStringLiteral("stat"),
                                       {QStringLiteral("-f"), QStringLiteral("-c"),
                                        QStringLiteral("%T"), QStringLiteral("/sys/fs/cgroup")})
                                    .output;
        const QString unified =
                runCommand(QStringLiteral("stat"),
                           {QStringLiteral("-f"), QStringLiteral("-c"), QStringLiteral("%T"),
                            QStringLiteral("/sys/fs/cgroup/unified")})
                        .output;
        CgroupMode expected = CgroupMode::None;
        if (top == QLatin1String("cgroup2fs"))
            expected = CgroupMode::Unified;
        else if (top == QLatin1String("tmpfs"))
            expected =
                    unified == QLatin1String("cgroup2fs") ? CgroupMode::Hybrid : CgroupMode::Legacy;
        QCOMPARE(cgroupModeName(m_caps.cgroupMode), cgroupModeName(expected));
    }

    void cgroupControllersAgreeWithProcCgroups()
    {
        // /proc/cgroups: name, hierarchy id (0 = v2 or unmounted), count, enabled.
        for (const QString &line :
             readText(QStringLiteral("/proc/cgroups")).split(QLatin1Char('\n'))) {
            const QStringList fields = line.split(QLatin1Char('\t'));
            if (line.startsWith(QLatin1Char('#')) || fields.size() < 4
                || fields[1] == QLatin1String("0") || fields[3] != QLatin1String("1"))
                continue;
            QVERIFY2(m_caps.cgroupControllers.contains(fields[0]), qPrintable(fields[0]));
        }
        // The writability probe cleans up after itself.
        const QString memory =
                m_caps.layer(u"cgroup")->facts.value(QLatin1String("memoryHierarchy")).toString();
        if (!memory.isEmpty())
            QVERIFY(!QFile::exists(memory + QStringLiteral("/cmcp-probe-%1").arg(getpid())));
    }

    void seccompAgreesWithProcStatus()
    {
        // The kernel prints a Seccomp: line exactly when it is built with CONFIG_SECCOMP.
        const QString mode = statusField(QStringLiteral("Seccomp"));
        QCOMPARE(m_caps.isAvailable(u"seccomp"), !mode.isNull());
    }

    void identityAndLimitsAgreeWithProc()
    {
        const QStringList uids = statusField(QStringLiteral("Uid")).split(QLatin1Char('\t'));
        QVERIFY(uids.size() >= 2);
        QCOMPARE(m_caps.root, uids[1] == QLatin1String("0")); // effective uid
        // Not root: the jail maps this uid alone into the job's user namespace, which needs both.
        QCOMPARE(m_caps.isAvailable(u"identity"),
                 m_caps.root
                         || (m_caps.isAvailable(u"userns") && m_caps.isAvailable(u"namespaces")));

        auto hardFromProc = [](const QString &label) -> qint64 {
            for (const QString &line :
                 readText(QStringLiteral("/proc/self/limits")).split(QLatin1Char('\n'))) {
                if (line.startsWith(label)) {
                    const QStringList columns = line.mid(26).simplified().split(QLatin1Char(' '));
                    return columns.value(1) == QLatin1String("unlimited")
                            ? -1
                            : columns.value(1).toLongLong();
                }
            }
            return -2;
        };
        QCOMPARE(m_caps.nofileHard, hardFromProc(QStringLiteral("Max open files")));
        QCOMPARE(m_caps.nprocHard, hardFromProc(QStringLiteral("Max processes")));
    }

private:
    SandboxCapabilities m_caps;
};

QTEST_GUILESS_MAIN(TestSandboxProbe)
#include "tst_sandboxprobe.moc"
