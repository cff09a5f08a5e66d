// What the system tools hand the jail, without running it: the program files found for an
// allow-list, the policies built from the layers a machine offers, working directories, and the
// checks on the Python runner's result channel.

#include "managers/BashManager.h"
#include "sandbox/JobPolicy.h"
#include "sandbox/ProgramFiles.h"
#include "managers/PythonManager.h"

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

class TestSystemJobs : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void findsProgramsByNameBeneathUsr()
    {
        QString error;
        const std::optional<FoundProgram> ls = ProgramFiles::find(QStringLiteral("ls"), &error);
        QVERIFY2(ls, qPrintable(error));
        QCOMPARE(ls->path, QStringLiteral("/usr/bin/ls"));
        QVERIFY(ls->realPath.startsWith(QLatin1String("/usr/")));
        for (const char *bad : {"", "../bin/ls", "/usr/bin/ls", "no-such-program-here", "."}) {
            QVERIFY2(!ProgramFiles::find(QLatin1String(bad), &error), bad);
            QVERIFY(!error.isEmpty());
        }
        QVERIFY(!ProgramFiles::find(QStringLiteral("no-such-program-here"), &error));
        QVERIFY(error.contains(QLatin1String("no program 'no-such-program-here'")));
    }

    // Each program brings its ELF loader (executable) and its libraries (mappable only).
    void programFilesNameTheLoaderAndTheLibraries()
    {
        QString error;
        ProgramFiles files;
        const std::optional<FoundProgram> ls = ProgramFiles::find(QStringLiteral("ls"), &error);
        QVERIFY(ls);
        QVERIFY2(files.addProgram(ls->realPath, &error), qPrintable(error));
        QCOMPARE(files.executables().size(), 2);
        QCOMPARE(files.executables().first(), ls->realPath);
        QVERIFY(files.executables().last().contains(QLatin1String("ld-linux")));
        const QStringList mappable = files.mappable();
        QVERIFY(std::any_of(mappable.begin(), mappable.end(), [](const QString &path) {
            return path.endsWith(QLatin1String("/libc.so.6"));
        }));
        for (const QString &path : mappable)
            QVERIFY2(path.startsWith(QLatin1String("/usr/")), qPrintable(path));
        // Nothing twice, however many programs share a library.
        const std::optional<FoundProgram> cat = ProgramFiles::find(QStringLiteral("cat"), &error);
        QVERIFY(files.addProgram(cat->realPath, &error));
        QCOMPARE(files.mappable().removeDuplicates(), 0);
        QCOMPARE(files.executables().size(), 3);
    }

    // A #! script needs its interpreter executable too.
    void scriptsBringTheirInterpreter()
    {
        QString error;
        const std::optional<FoundProgram> zgrep =
                ProgramFiles::find(QStringLiteral("zgrep"), &error);
        if (!zgrep)
            QSKIP("no zgrep on this machine");
        ProgramFiles files;
        QVERIFY2(files.addProgram(zgrep->realPath, &error), qPrintable(error));
        QVERIFY(files.executables().contains(zgrep->realPath));
        QVERIFY(files.executables().size() >= 3); // the script, its shell, the loader
    }

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
        const QJsonObject policy = builder.build(spec).toJson();
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
        const QJsonObject policy = builder.build(spec).toJson();
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
        spec.network = true;
        const QJsonObject policy = builder.build(spec).toJson();
        QCOMPARE(strings(policy[u"landlock"][u"execute"]), QStringList{"/usr"});
        QVERIFY(!policy[u"namespaces"].toObject().contains(QLatin1String("exec_paths")));
        QVERIFY(policy[u"env"][u"PATH"].toString().contains(QLatin1String("/usr/bin")));
        QCOMPARE(policy[u"namespaces"][u"network"].toBool(), true);
        QCOMPARE(policy[u"landlock"][u"network"].toBool(), true);
    }

    // AppArmor is asked for only when a loaded profile is named (none is loaded on a kernel
    // without AppArmor, as here).
    void apparmorOnlyWithALoadedProfile()
    {
        const JobPolicy builder(machineWith(kAllButApparmor + QStringList{"apparmor"}),
                                QStringLiteral("/srv/ws"));
        JobPolicySpec spec;
        QVERIFY(!strings(builder.build(spec).toJson()[u"layers"])
                         .contains(QStringLiteral("apparmor")));
        spec.apparmorProfile = QStringLiteral("cmcp-no-such-profile");
        QVERIFY(!strings(builder.build(spec).toJson()[u"layers"])
                         .contains(QStringLiteral("apparmor")));
    }

    void workingDirectoriesStayInTheWorkspace()
    {
        QString error;
        QCOMPARE(*workspaceRelativeDirectory(QString(), &error), QString());
        QCOMPARE(*workspaceRelativeDirectory(QStringLiteral("/"), &error), QString());
        QCOMPARE(*workspaceRelativeDirectory(QStringLiteral("/a//b/./c/"), &error),
                 QStringLiteral("a/b/c"));
        QVERIFY(!workspaceRelativeDirectory(QStringLiteral("a/../../b"), &error));
        QVERIFY(error.contains(QLatin1String("leaves the workspace")));
        QVERIFY(!workspaceRelativeDirectory(QStringLiteral(".."), &error));
        QVERIFY(!workspaceRelativeDirectory(QStringLiteral("a") + QChar(0), &error));
    }

    void pythonResultNeedsTheNonce()
    {
        JobResult result;
        result.channel = "abc\n{\"ran\": true, \"raised\": false, \"exit_status\": null, "
                         "\"result\": [1, 2], \"repr\": false}";
        PythonOutcome outcome = PythonManager::outcome(result, "abc");
        QVERIFY(outcome.channelProblem.isEmpty());
        QVERIFY(outcome.ranToEnd);
        QCOMPARE(outcome.result, QJsonValue(QJsonArray{1, 2}));

        outcome = PythonManager::outcome(result, "abd");
        QVERIFY(outcome.channelProblem.contains(QLatin1String("something other")));
        QCOMPARE(outcome.result, QJsonValue(QJsonValue::Null));

        result.channel.prepend("forged\n{}");
        outcome = PythonManager::outcome(result, "abc");
        QVERIFY(!outcome.channelProblem.isEmpty());
        QVERIFY(!outcome.ranToEnd);

        result.channel = "abc\nnot json";
        QVERIFY(PythonManager::outcome(result, "abc")
                        .channelProblem.contains(QLatin1String("JSON")));

        result.channel.clear();
        outcome = PythonManager::outcome(result, "abc");
        QVERIFY(outcome.channelProblem.isEmpty());
        QVERIFY(!outcome.ranToEnd);

        result.channel = "abc\n{}";
        result.channelOverflowed = true;
        QVERIFY(PythonManager::outcome(result, "abc")
                        .channelProblem.contains(QLatin1String("larger")));
    }
};

QTEST_GUILESS_MAIN(TestSystemJobs)
#include "tst_systemjobs.moc"
