// JailJob and SandboxSupervisor against the real cmcp-jail: results, timeouts and cancellation
// that leave no process of the job behind, the output cap with its spill file, memory under a
// flood of output, refusals, and the uid pool. The jail switches to host uids, so this needs
// root; each test uses a uid of its own from 100500 up (tests/security uses 100200-100499).

#include "sandbox/JailJob.h"
#include "sandbox/SandboxSupervisor.h"

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <sys/stat.h>
#include <csignal>
#include <unistd.h>

using namespace cmcp;

namespace {

const QString kJail = QStringLiteral(CMCP_JAIL_PATH);
const QStringList kLayers{"identity", "rlimits", "seccomp"};
const std::vector<jail::Layer> kJailLayers{jail::Layer::Identity, jail::Layer::Rlimits,
                                           jail::Layer::Seccomp};

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// "Name:\tvalue" of /proc/<pid>/status; empty when absent.
QByteArray statusField(const QByteArray &status, const QByteArray &name)
{
    for (const QByteArray &line : status.split('\n')) {
        if (line.startsWith(name + ':'))
            return line.mid(name.size() + 1).trimmed();
    }
    return {};
}

qint64 selfStatusKb(const QByteArray &name)
{
    return statusField(readFile(QStringLiteral("/proc/self/status")), name)
            .split(' ')
            .first()
            .toLongLong();
}

// Live (not zombie) processes whose real or effective uid is `uid`, as "pid name state".
QStringList liveProcessesOf(uid_t uid)
{
    QStringList found;
    const QStringList pids =
            QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &pid : pids) {
        bool numeric = false;
        pid.toInt(&numeric);
        if (!numeric)
            continue;
        const QByteArray status = readFile(QStringLiteral("/proc/%1/status").arg(pid));
        const QList<QByteArray> ids = statusField(status, "Uid").split('\t');
        if (ids.size() < 2 || (ids[0].toUInt() != uid && ids[1].toUInt() != uid))
            continue;
        const QByteArray state = statusField(status, "State");
        if (state.startsWith('Z'))
            continue;
        found.append(QStringLiteral("%1 %2 %3")
                             .arg(pid, QString::fromLatin1(statusField(status, "Name")),
                                  QString::fromLatin1(state)));
    }
    return found;
}

// The cmcp-jail processes this test started (children of this process).
QList<int> jailChildren()
{
    QList<int> pids;
    const QStringList entries =
            QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        const QByteArray status = readFile(QStringLiteral("/proc/%1/status").arg(entry));
        if (statusField(status, "PPid").toInt() == getpid()
            && statusField(status, "Name") == "cmcp-jail")
            pids.append(entry.toInt());
    }
    return pids;
}

// cmcp-jail switches every job to a host uid of the pool: the tests of the real jail need root.
#define REQUIRE_ROOT()                                                                             \
  do {                                                                                             \
    if (geteuid() != 0)                                                                            \
      QSKIP("needs root: cmcp-jail switches every job to a host uid of the pool");                 \
  } while (false)

// A workspace the job's uid owns.
struct Workspace
{
    explicit Workspace(uid_t uid)
    {
        ok = dir.isValid() && ::chown(QFile::encodeName(dir.path()).constData(), uid, uid) == 0;
    }
    QTemporaryDir dir;
    bool ok = false;
};

JailPolicy minimalPolicy(uid_t uid, const QString &workspace)
{
    JailPolicy policy;
    policy.uid = uid;
    policy.gid = uid;
    policy.workspace = workspace.toStdString();
    policy.env = {{"PATH", "/usr/bin:/bin"}};
    policy.layers = kJailLayers;
    policy.limits.processes = 256;
    return policy;
}

// A stand-in for cmcp-jail in `dir` that hands the real one `policy` (as a file) instead of the
// one it gets on its pipe: for policies the daemon's types cannot express.
QString jailWithPolicy(const QTemporaryDir &dir, const QJsonObject &policy)
{
    const QString policyPath = dir.filePath(QStringLiteral("policy.json"));
    QFile policyFile(policyPath);
    if (!policyFile.open(QIODevice::WriteOnly))
        return {};
    policyFile.write(QJsonDocument(policy).toJson(QJsonDocument::Compact));
    policyFile.close();
    const QString jail = dir.filePath(QStringLiteral("jail-with-policy"));
    QFile script(jail);
    if (!script.open(QIODevice::WriteOnly))
        return {};
    // $1 --policy-fd $2 N: the rest (the report pipe, the program) goes to the real jail.
    script.write(QStringLiteral("#!/bin/sh\neval \"exec $2<&-\"\nshift 2\n"
                                "exec '%1' --policy '%2' \"$@\"\n")
                         .arg(kJail, policyPath)
                         .toUtf8());
    script.close();
    script.setPermissions(QFileDevice::ReadOwner | QFileDevice::ExeOwner);
    return jail;
}

JobSpec shellJob(uid_t uid, const QString &workspace, const QString &script)
{
    JobSpec spec;
    spec.jailProgram = kJail;
    spec.program = QStringLiteral("/bin/sh");
    spec.arguments = {QStringLiteral("-c"), script};
    spec.policy = minimalPolicy(uid, workspace);
    return spec;
}

// Starts the job and runs an event loop until its result (bounded). Not QTest::qWaitFor: it
// sleeps 10 ms whenever no event is pending, which would throttle the job's output to one pipe
// buffer per 10 ms.
std::optional<JobResult> run(JailJob &job, int limitMs = 30000)
{
    std::optional<JobResult> result;
    QEventLoop loop;
    QObject::connect(&job, &JailJob::finished, &loop, [&](const JobResult &r) {
        result = r;
        loop.quit();
    });
    QTimer::singleShot(limitMs, &loop, &QEventLoop::quit);
    job.start();
    loop.exec();
    return result;
}

// A job tree that a plain kill of the jail would not end: a background child, and a
// double-forked grandchild in a session of its own with a child of its own.
const QString kEscapingTree = QStringLiteral("sleep 1000 & "
                                             "( setsid sh -c 'sleep 1000 & exec sleep 1000' & ) ; "
                                             "echo ready; exec sleep 1000");

} // namespace

class TestJailJob : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(kJail).isExecutable(), qPrintable(kJail));
        QVERIFY(m_spill.isValid());
    }

    // A stand-in for cmcp-jail shows what the real one receives: the policy on its pipe, the
    // report pipe, nothing else of this process; and a report it cannot understand.
    void jailGetsThePolicyAndTheReportPipeAndNoOtherDescriptor()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString fakeJail = dir.filePath(QStringLiteral("fake-jail"));
        QFile script(fakeJail);
        QVERIFY(script.open(QIODevice::WriteOnly));
        // $1 --policy-fd $2 N $3 --report-fd $4 M $5 -- $6 program. Last, ls lists the
        // descriptors it inherited (and the one it opens on /proc/self/fd).
        script.write(R"(#!/bin/sh
echo "$1 $3 $5 $6"
echo "$2 $4"
cat /proc/self/fd/$2; echo
printf '{"event":"started","pid":%d,"layers":["identity"]}\nnot json\n' $$ > /proc/self/fd/$4
exec ls -l /proc/self/fd
)");
        script.close();
        QVERIFY(script.setPermissions(QFileDevice::ReadOwner | QFileDevice::ExeOwner));

        JobSpec spec = shellJob(100599, QStringLiteral("/nonexistent"), "true");
        spec.jailProgram = fakeJail;
        JailJob job(spec);
        const std::optional<JobResult> result = run(job, 10000);
        QVERIFY(result);
        const QList<QByteArray> lines = result->standardOutput.head.split('\n');
        QVERIFY2(lines.size() >= 4, result->standardOutput.head.constData());
        QCOMPARE(lines[0], QByteArray("--policy-fd --report-fd -- /bin/sh"));
        const QList<QByteArray> pipes = lines[1].split(' ');
        QCOMPARE(pipes.size(), 2);
        QCOMPARE(QJsonDocument::fromJson(lines[2]).object(), jailPolicyObject(spec.policy));
        QList<int> fds;
        static const QRegularExpression fdLine(QStringLiteral(" (\\d+) -> (.*)$"));
        for (const QByteArray &line : lines.mid(3)) {
            const QRegularExpressionMatch match = fdLine.match(QString::fromUtf8(line));
            if (match.hasMatch() && !match.captured(2).startsWith(QStringLiteral("/proc/")))
                fds.append(match.captured(1).toInt());
        }
        std::sort(fds.begin(), fds.end());
        QList<int> expectedFds{0, 1, 2, pipes[0].toInt(), pipes[1].toInt()};
        std::sort(expectedFds.begin(), expectedFds.end());
        QCOMPARE(fds, expectedFds);

        QCOMPARE(result->exitCode, 0);
        QCOMPARE(result->layers, QStringList{"identity"});
        QCOMPARE(result->reportErrors,
                 QStringList({"not a JSON object: not json",
                              "cmcp-jail exited (status 0) without reporting how the job ended"}));
        QCOMPARE(result->toJson()["report_errors"].toArray().size(), 2);
    }

    // A jail that ignores SIGTERM still ends: SIGKILL after the grace.
    void jailThatIgnoresTerminationIsKilledAfterTheGrace()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString fakeJail = dir.filePath(QStringLiteral("stubborn-jail"));
        QFile script(fakeJail);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\ntrap '' TERM\necho up\nexec sleep 1000\n");
        script.close();
        QVERIFY(script.setPermissions(QFileDevice::ReadOwner | QFileDevice::ExeOwner));

        JobSpec spec = shellJob(100599, QStringLiteral("/nonexistent"), "true");
        spec.jailProgram = fakeJail;
        JailJob job(spec);
        std::optional<JobResult> result;
        bool up = false;
        connect(&job, &JailJob::outputReceived, this, [&] { up = true; });
        connect(&job, &JailJob::finished, this, [&](const JobResult &r) { result = r; });
        job.start();
        QVERIFY(QTest::qWaitFor([&] { return up; }, 5000));
        QElapsedTimer clock;
        clock.start();
        job.cancel();
        QVERIFY(QTest::qWaitFor([&] { return result.has_value(); }, 5000));
        const qint64 elapsed = clock.elapsed();
        QVERIFY2(elapsed >= JailJob::kKillGraceMs - 10 && elapsed < JailJob::kKillGraceMs + 500,
                 qPrintable(QString::number(elapsed)));
        QVERIFY(result->cancelled);
        QCOMPARE(result->signal, SIGKILL);
        QCOMPARE(result->exitCode, std::nullopt);
        QCOMPARE(result->reportErrors,
                 QStringList{
                         "cmcp-jail was killed by signal 9 before it reported how the job ended"});
    }

    void exitCodeOutputsAndAccounting()
    {
        const uid_t uid = 100500;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        JobSpec spec = shellJob(uid, ws.dir.path(), "echo out; id -u; echo err >&2; exit 7");
        spec.insecure = true;
        JailJob job(spec);
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QCOMPARE(result->standardOutput.text(), QStringLiteral("out\n%1\n").arg(uid));
        QCOMPARE(result->standardError.text(), QStringLiteral("err\n"));
        QVERIFY2(result->refusal == std::nullopt,
                 qPrintable(result->refusal ? result->refusal->message : QString()));
        QVERIFY2(result->reportErrors.isEmpty(), qPrintable(result->reportErrors.join(u'\n')));
        QCOMPARE(result->exitCode, 7);
        QCOMPARE(result->signal, std::nullopt);
        QVERIFY(!result->timedOut && !result->cancelled && !result->oomKilled
                && !result->truncated());
        QCOMPARE(result->layers, kLayers);
        QVERIFY(result->cpuMs.has_value());
        QVERIFY(result->wallMs >= 0 && result->wallMs < 10000);
        QVERIFY(result->insecure);

        const QJsonObject json = result->toJson();
        QCOMPARE(json["exit_code"].toInt(), 7);
        QVERIFY(json["signal"].isNull());
        QCOMPARE(json["stdout"].toString(), QStringLiteral("out\n%1\n").arg(uid));
        QCOMPARE(json["insecure"].toBool(), true);
        QCOMPARE(json["truncated"].toBool(), false);
        QCOMPARE(json["layers"].toArray().size(), 3);
        QVERIFY(json.contains("cpu_ms") && json.contains("peak_memory_kb")
                && json.contains("wall_ms"));
        QVERIFY(!json.contains("refused") && !json.contains("error")
                && !json.contains("stdout_spill"));
    }

    void standardInputReachesTheJob()
    {
        const uid_t uid = 100501;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        JobSpec spec = shellJob(uid, ws.dir.path(), "tr a-z A-Z");
        spec.standardInput = "hello jail\n";
        JailJob job(spec);
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QCOMPARE(result->exitCode, 0);
        QCOMPARE(result->standardOutput.head, QByteArray("HELLO JAIL\n"));
    }

    // The job exits without reading: writing the rest must not raise SIGPIPE in the daemon.
    void standardInputTheJobDoesNotReadIsHarmless()
    {
        const uid_t uid = 100501;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        JobSpec spec = shellJob(uid, ws.dir.path(), "exit 4");
        spec.standardInput = QByteArray(4 * 1024 * 1024, 'i');
        JailJob job(spec);
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QCOMPARE(result->exitCode, 4);
    }

    void withoutStandardInputTheJobReadsEndOfFile()
    {
        const uid_t uid = 100501;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        JailJob job(shellJob(uid, ws.dir.path(), "cat; echo done"));
        const std::optional<JobResult> result = run(job, 10000);
        QVERIFY(result);
        QCOMPARE(result->standardOutput.head, QByteArray("done\n"));
    }

    void signalThatEndsTheJobIsReported()
    {
        const uid_t uid = 100502;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        JailJob job(shellJob(uid, ws.dir.path(), "kill -KILL $$"));
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QCOMPARE(result->signal, 9);
        QCOMPARE(result->exitCode, std::nullopt);
        QVERIFY(!result->timedOut && !result->cancelled);
    }

    void timeoutKillsTheWholeTree()
    {
        const uid_t uid = 100503;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        QVERIFY(liveProcessesOf(uid).isEmpty());
        JobSpec spec = shellJob(uid, ws.dir.path(), kEscapingTree);
        const int timeoutMs = 1500;
        spec.timeoutMs = timeoutMs;
        JailJob job(spec);
        std::optional<JobResult> result;
        connect(&job, &JailJob::finished, this, [&](const JobResult &r) { result = r; });
        QElapsedTimer clock;
        clock.start();
        job.start();
        // The tree (sh, sleep, the setsid'd sh and its sleep, the exec'd sleep) is up long
        // before the timeout: count it, so that the test cannot pass on an empty uid.
        QVERIFY(QTest::qWaitFor([&] { return liveProcessesOf(uid).size() >= 4; }, timeoutMs - 200));
        const int treeSize = int(liveProcessesOf(uid).size());
        QVERIFY(QTest::qWaitFor([&] { return result.has_value(); }, 10000));
        const qint64 finishedMs = clock.elapsed();
        (void)QTest::qWaitFor([&] { return liveProcessesOf(uid).isEmpty(); },
                              2000); // checked below
        const qint64 deadMs = clock.elapsed();
        QVERIFY2(treeSize >= 4, qPrintable(QString::number(treeSize)));
        QVERIFY2(liveProcessesOf(uid).isEmpty(), qPrintable(liveProcessesOf(uid).join(", ")));
        qInfo("timeout: %d processes; result %lld ms and no process of the uid %lld ms after the "
              "%d ms limit (upper bounds: measured from before start())",
              treeSize, finishedMs - timeoutMs, deadMs - timeoutMs, timeoutMs);
        QVERIFY2(deadMs - timeoutMs < 1000, qPrintable(QString::number(deadMs - timeoutMs)));
        QVERIFY(result->timedOut);
        QVERIFY(!result->cancelled);
        QVERIFY(result->signal.has_value());
        QCOMPARE(result->exitCode, std::nullopt);
        QCOMPARE(result->standardOutput.head, QByteArray("ready\n"));
        QVERIFY2(result->reportErrors.isEmpty(), qPrintable(result->reportErrors.join(u'\n')));
        QVERIFY(result->error.isEmpty());
        QVERIFY(result->toJson()["timed_out"].toBool());
    }

    void cancelKillsTheWholeTreeAndTheJailGetsNoDaemonEnvironment()
    {
        const uid_t uid = 100504;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        qputenv("CMCP_TEST_SECRET", "must-not-leak");
        JailJob job(shellJob(uid, ws.dir.path(), kEscapingTree));
        std::optional<JobResult> result;
        bool ready = false;
        connect(&job, &JailJob::outputReceived, this, [&] { ready = true; });
        connect(&job, &JailJob::finished, this, [&](const JobResult &r) { result = r; });
        job.start();
        QVERIFY(QTest::qWaitFor([&] { return ready; }, 10000));
        QVERIFY(QTest::qWaitFor([&] { return liveProcessesOf(uid).size() >= 4; }, 2000));
        QVERIFY(job.isRunning());

        const QList<int> jails = jailChildren();
        QCOMPARE(jails.size(), 1);
        QCOMPARE(readFile(QStringLiteral("/proc/%1/environ").arg(jails.first())), QByteArray());

        QElapsedTimer clock;
        clock.start();
        job.cancel();
        QVERIFY(QTest::qWaitFor([&] { return result.has_value(); }, 10000));
        const qint64 finishedMs = clock.elapsed();
        (void)QTest::qWaitFor([&] { return liveProcessesOf(uid).isEmpty(); },
                              2000); // checked below
        const qint64 deadMs = clock.elapsed();
        QVERIFY2(liveProcessesOf(uid).isEmpty(), qPrintable(liveProcessesOf(uid).join(", ")));
        qInfo("cancel: result after %lld ms, no process of the uid after %lld ms", finishedMs,
              deadMs);
        QVERIFY2(deadMs < 1000, qPrintable(QString::number(deadMs)));
        QVERIFY(result->cancelled);
        QVERIFY(!result->timedOut);
        QVERIFY(!job.isRunning());
        job.cancel(); // after the end: nothing happens, no second result
        QTest::qWait(50);
    }

    void leftoversOfAJobThatExitedAreKilled()
    {
        const uid_t uid = 100505;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        // Without a pid namespace the jail cannot see this daemon once the job has exited.
        JailJob job(shellJob(uid, ws.dir.path(),
                             "( setsid sleep 1000 & ) ; sleep 0.2; echo started; exit 0"));
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QCOMPARE(result->exitCode, 0);
        QVERIFY(QTest::qWaitFor([&] { return liveProcessesOf(uid).isEmpty(); }, 1000));
    }

    void destroyingARunningJobKillsIt()
    {
        const uid_t uid = 100506;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        auto *job = new JailJob(shellJob(uid, ws.dir.path(), kEscapingTree));
        bool ready = false;
        connect(job, &JailJob::outputReceived, this, [&] { ready = true; });
        job->start();
        QVERIFY(QTest::qWaitFor([&] { return ready; }, 10000));
        QVERIFY(QTest::qWaitFor([&] { return liveProcessesOf(uid).size() >= 4; }, 2000));
        delete job;
        QVERIFY(QTest::qWaitFor([&] { return liveProcessesOf(uid).isEmpty(); }, 1000));
        QVERIFY(jailChildren().isEmpty());
    }

    void outputCapKeepsHeadAndTailAndSpillsEverything()
    {
        const uid_t uid = 100507;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        QByteArray expected;
        for (int i = 1; i <= 200000; ++i)
            expected += QByteArray::number(i) + '\n';
        JobSpec spec = shellJob(uid, ws.dir.path(), "seq 1 200000; echo tiny >&2");
        spec.outputCapBytes = 4096;
        spec.spillDirectory = m_spill.path();
        JailJob job(spec);
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QCOMPARE(result->exitCode, 0);
        const CapturedStream &out = result->standardOutput;
        QVERIFY(out.truncated);
        QCOMPARE(out.totalBytes, expected.size());
        QCOMPARE(out.head, expected.left(2048));
        QCOMPARE(out.tail, expected.right(2048));
        QCOMPARE(out.spillPath, QDir(m_spill.path()).filePath(job.id() + ".stdout"));
        QCOMPARE(readFile(out.spillPath), expected);
        struct stat info
        {
        };
        QCOMPARE(::stat(QFile::encodeName(out.spillPath).constData(), &info), 0);
        QCOMPARE(info.st_mode & 07777, mode_t(0600));
        QCOMPARE(info.st_uid, uid_t(0)); // the daemon's file, not the job's

        // stderr stayed under the cap: whole, and no file for it.
        QCOMPARE(result->standardError.head, QByteArray("tiny\n"));
        QVERIFY(!result->standardError.truncated);
        QVERIFY(!QFile::exists(QDir(m_spill.path()).filePath(job.id() + ".stderr")));

        const QJsonObject json = result->toJson();
        QVERIFY(json["truncated"].toBool());
        QCOMPARE(json["stdout_spill"].toString(), out.spillPath);
        QCOMPARE(json["stdout_bytes"].toInteger(), expected.size());
        const QString text = json["stdout"].toString();
        QVERIFY(text.startsWith(QString::fromLatin1(expected.left(2048))));
        QVERIFY(text.endsWith(QString::fromLatin1(expected.right(2048))));
        QVERIFY(text.contains(QStringLiteral("[... %1 bytes omitted of %2 ...]")
                                      .arg(expected.size() - 4096)
                                      .arg(expected.size())));
        QFile::remove(out.spillPath);
    }

    void floodOfOutputDoesNotGrowMemory()
    {
#ifdef CMCP_ADDRESS_SANITIZER
        QSKIP("AddressSanitizer's quarantine keeps freed chunks: RSS says nothing here");
#endif
        const uid_t uid = 100508;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        const qint64 bytes = 300 * 1000 * 1000;
        JobSpec spec =
                shellJob(uid, ws.dir.path(), QStringLiteral("head -c %1 /dev/zero").arg(bytes));
        spec.spillDirectory = m_spill.path();
        JailJob job(spec);
        qint64 received = 0;
        connect(&job, &JailJob::outputReceived, this,
                [&](JobStream, const QByteArray &chunk) { received += chunk.size(); });
        // Warm up allocator and Qt's buffers with a first small job, then reset the peak.
        {
            JailJob warmUp(shellJob(uid, ws.dir.path(), "head -c 1000000 /dev/zero"));
            QVERIFY(run(warmUp));
        }
        const qint64 rssBeforeKb = selfStatusKb("VmRSS");
        QFile clearRefs(QStringLiteral("/proc/self/clear_refs"));
        QVERIFY(clearRefs.open(QIODevice::WriteOnly) && clearRefs.write("5") == 1);
        clearRefs.close();
        QElapsedTimer clock;
        clock.start();
        const std::optional<JobResult> result = run(job, 90000);
        const qint64 elapsedMs = clock.elapsed();
        QVERIFY(result);
        const qint64 peakKb = selfStatusKb("VmHWM");
        qInfo("300 MB of output in %lld ms: RSS %lld kB before, peak %lld kB during (+%lld kB)",
              elapsedMs, rssBeforeKb, peakKb, peakKb - rssBeforeKb);
        QCOMPARE(result->exitCode, 0);
        QCOMPARE(received, bytes);
        QCOMPARE(result->standardOutput.totalBytes, bytes);
        QVERIFY(result->truncated());
        QCOMPARE(QFileInfo(result->standardOutput.spillPath).size(), bytes);
        QFile::remove(result->standardOutput.spillPath);
        QVERIFY2(peakKb - rssBeforeKb < 8 * 1024,
                 qPrintable(QString::number(peakKb - rssBeforeKb)));
    }

    // The result channel: one descriptor, named in the job's environment, whose bytes come back
    // apart from the output, capped; a job without it has neither the descriptor nor the name.
    void resultChannelCarriesWhatTheJobWritesApartFromItsOutput()
    {
        const uid_t uid = 100530;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        JobSpec spec = shellJob(uid, ws.dir.path(),
                                QStringLiteral("echo out; printf 'the result' >&$CMCP_RESULT_FD; "
                                               "ls /proc/self/fd | wc -l >&2"));
        spec.resultChannel = true;
        JailJob job(spec);
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QCOMPARE(result->exitCode, 0);
        QCOMPARE(result->standardOutput.head, QByteArray("out\n"));
        QCOMPARE(result->channel, QByteArray("the result"));
        QVERIFY(!result->channelOverflowed);
        // stdio, the channel, and the descriptor ls opens on /proc/self/fd.
        QCOMPARE(result->standardError.head.trimmed(), QByteArray("5"));

        JailJob plain(shellJob(uid, ws.dir.path(),
                               QStringLiteral("echo \"[${CMCP_RESULT_FD-unset}]\"; "
                                              "ls /proc/self/fd | wc -l")));
        const std::optional<JobResult> plainResult = run(plain);
        QVERIFY(plainResult);
        QCOMPARE(plainResult->standardOutput.head, QByteArray("[unset]\n4\n"));
        QVERIFY(plainResult->channel.isEmpty());
    }

    void resultChannelBeyondItsCapIsDrainedAndMarked()
    {
        const uid_t uid = 100531;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        const qint64 bytes = JailJob::kResultChannelCapBytes + 1000000;
        JobSpec spec = shellJob(
                uid, ws.dir.path(),
                QStringLiteral("head -c %1 /dev/zero >&$CMCP_RESULT_FD; echo done").arg(bytes));
        spec.resultChannel = true;
        JailJob job(spec);
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QCOMPARE(result->standardOutput.head, QByteArray("done\n"));
        QCOMPARE(result->channel.size(), JailJob::kResultChannelCapBytes);
        QVERIFY(result->channelOverflowed);
    }

    // A job started ahead of its call waits on an open standard input; its time limit and its
    // wall_ms start when the input comes.
    void awaitInputJobWaitsForItsInputAndCountsFromIt()
    {
        const uid_t uid = 100532;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        JobSpec spec = shellJob(uid, ws.dir.path(), QStringLiteral("cat; exec sleep 5"));
        spec.awaitInput = true;
        spec.timeoutMs = 100; // ignored: the limit comes with the input
        JailJob job(spec);
        std::optional<JobResult> result;
        connect(&job, &JailJob::finished, this, [&](const JobResult &r) { result = r; });
        job.start();
        QTest::qWait(600);
        QVERIFY2(!result && job.isRunning(), "the job did not wait for its input");
        QElapsedTimer clock;
        clock.start();
        job.provideInput("the input\n", 400);
        QVERIFY(QTest::qWaitFor([&] { return result.has_value(); }, 5000));
        QCOMPARE(result->standardOutput.head, QByteArray("the input\n"));
        QVERIFY(result->timedOut);
        QVERIFY2(clock.elapsed() >= 400 && clock.elapsed() < 2000,
                 qPrintable(QString::number(clock.elapsed())));
        QVERIFY2(result->wallMs < 1000, qPrintable(QString::number(result->wallMs)));
    }

    void refusedPolicyNamesTheStepAndTheJobNeverRuns_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("layer");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        QTest::newRow("policy") << "limits" << QJsonValue(QJsonObject{{"bogus", 1}}) << "policy"
                                << 91 << "cmcp-jail: policy: limits.bogus: unknown key";
        QTest::newRow("rlimits above hard")
                << "limits" << QJsonValue(QJsonObject{{"open_files", 1LL << 40}}) << "rlimits" << 93
                << "cmcp-jail: rlimits: ";
    }

    void refusedPolicyNamesTheStepAndTheJobNeverRuns()
    {
        QFETCH(QString, key);
        QFETCH(QJsonValue, value);
        QFETCH(QString, layer);
        QFETCH(int, code);
        QFETCH(QString, message);
        const uid_t uid = 100509;
        REQUIRE_ROOT();
        Workspace ws(uid);
        QVERIFY(ws.ok);
        JobSpec spec = shellJob(uid, ws.dir.path(), "touch ran");
        QJsonObject policy = jailPolicyObject(spec.policy);
        policy.insert(key, value);
        QTemporaryDir jailDir;
        QVERIFY(jailDir.isValid());
        spec.jailProgram = jailWithPolicy(jailDir, policy);
        QVERIFY(!spec.jailProgram.isEmpty());
        JailJob job(spec);
        const std::optional<JobResult> result = run(job);
        QVERIFY(result);
        QVERIFY2(result->refusal, qPrintable(result->reportErrors.join(u'\n')));
        QCOMPARE(result->refusal->layer, layer);
        QCOMPARE(result->refusal->code, code);
        QVERIFY2(result->refusal->message.startsWith(message),
                 qPrintable(result->refusal->message));
        QCOMPARE(result->exitCode, std::nullopt);
        QVERIFY(result->layers.isEmpty());
        QVERIFY(!QFile::exists(QDir(ws.dir.path()).filePath("ran")));
        const QJsonObject refused = result->toJson()["refused"].toObject();
        QCOMPARE(refused["layer"].toString(), layer);
        QCOMPARE(refused["code"].toInt(), code);
    }

    void missingJailIsAnErrorResult()
    {
        JobSpec spec = shellJob(100509, QStringLiteral("/tmp"), "true");
        spec.jailProgram = QStringLiteral("/nonexistent/cmcp-jail");
        JailJob job(spec);
        const std::optional<JobResult> result = run(job, 5000);
        QVERIFY(result);
        QVERIFY2(result->error.startsWith(
                         QStringLiteral("cannot start cmcp-jail (/nonexistent/cmcp-jail)")),
                 qPrintable(result->error));
        QVERIFY(!job.isRunning());
        // Failed starts leak nothing (Qt 6.4's QProcess leaked a pipe on each one).
        const auto openDescriptors = [] {
            return QDir(QStringLiteral("/proc/self/fd"))
                    .entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)
                    .size();
        };
        const qsizetype before = openDescriptors();
        for (int i = 0; i < 10; ++i) {
            JailJob again(spec);
            QVERIFY(run(again, 5000));
        }
        QCOMPARE(openDescriptors(), before);
    }

    void supervisorGivesEachRunningJobItsOwnUidAndRefusesBeyondThePool()
    {
        REQUIRE_ROOT();
        QTemporaryDir workspace; // root's, 0755: the jobs only need to enter it
        QVERIFY(workspace.isValid());
        QVERIFY(QFile::setPermissions(workspace.path(),
                                      QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                              | QFileDevice::ExeOwner | QFileDevice::ReadOther
                                              | QFileDevice::ExeOther | QFileDevice::ReadGroup
                                              | QFileDevice::ExeGroup));
        SandboxOptions options;
        options.jailProgram = kJail;
        options.uidBase = 100510;
        options.uidCount = 2;
        options.gid = 100510;
        options.insecure = true;
        SandboxSupervisor supervisor(options);

        JobRequest request;
        request.program = QStringLiteral("/bin/sh");
        request.arguments = {QStringLiteral("-c"), QStringLiteral("id -u; id -g; exec sleep 1000")};
        // uid and gid 0: the supervisor gives the job one of its pool.
        request.policy = minimalPolicy(0, workspace.path());

        // Two principals: one alone may not take the pool's last uid (UidPool::reserve).
        QString error;
        request.principal = QStringLiteral("first");
        std::unique_ptr<JailJob> first(supervisor.createJob(request, nullptr, &error));
        request.principal = QStringLiteral("second");
        std::unique_ptr<JailJob> second(supervisor.createJob(request, nullptr, &error));
        QVERIFY(first && second);
        QCOMPARE(supervisor.uidsAvailable(), uid_t(0));
        request.principal = QStringLiteral("third");
        QVERIFY(!supervisor.createJob(request, nullptr, &error));
        QCOMPARE(error,
                 QStringLiteral("all 2 sandbox uids are in use by running jobs "
                                "(SANDBOX_UID_COUNT); try again when one has finished"));

        QByteArray firstOut, secondOut;
        std::optional<JobResult> firstResult, secondResult;
        connect(first.get(), &JailJob::outputReceived, this,
                [&](JobStream, const QByteArray &b) { firstOut += b; });
        connect(second.get(), &JailJob::outputReceived, this,
                [&](JobStream, const QByteArray &b) { secondOut += b; });
        connect(first.get(), &JailJob::finished, this,
                [&](const JobResult &r) { firstResult = r; });
        connect(second.get(), &JailJob::finished, this,
                [&](const JobResult &r) { secondResult = r; });
        first->start();
        second->start();
        QVERIFY(QTest::qWaitFor(
                [&] { return firstOut.count('\n') == 2 && secondOut.count('\n') == 2; }, 10000));
        const QSet<QByteArray> uids{firstOut.split('\n').at(0), secondOut.split('\n').at(0)};
        QCOMPARE(uids, QSet<QByteArray>({"100510", "100511"}));
        QCOMPARE(firstOut.split('\n').at(1), QByteArray("100510"));
        QCOMPARE(secondOut.split('\n').at(1), QByteArray("100510"));

        first->cancel();
        second->cancel();
        QVERIFY(QTest::qWaitFor([&] { return firstResult && secondResult; }, 10000));
        QVERIFY(firstResult->insecure && secondResult->insecure);
        QVERIFY(firstResult->cancelled);
        QCOMPARE(supervisor.uidsAvailable(), uid_t(2));
        std::unique_ptr<JailJob> third(supervisor.createJob(request, nullptr, &error));
        QVERIFY(third);
        QCOMPARE(supervisor.uidsAvailable(), uid_t(1));
        third.reset(); // never started: its uid goes back
        QCOMPARE(supervisor.uidsAvailable(), uid_t(2));
    }

private:
    QTemporaryDir m_spill;
};

QTEST_GUILESS_MAIN(TestJailJob)
#include "tst_jailjob.moc"
