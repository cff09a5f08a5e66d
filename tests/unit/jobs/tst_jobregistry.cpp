// JobRegistry, BackgroundJob and JobOutputLog: job ids scoped to their session, the caps on
// running jobs, what a session's end does to its jobs, bounded finished jobs, interactive input,
// and windows of the output log. The jobs run under a stand-in for cmcp-jail that just execs
// the program (the jail itself is tested in tst_jailjob), so this needs no root.

#include "jobs/BackgroundJob.h"
#include "sandbox/JailJob.h"
#include "jobs/JobOutputLog.h"
#include "jobs/JobRegistry.h"
#include "base/UnguessableId.h"

#include <QFile>
#include <QPointer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include <sys/stat.h>

using namespace cmcp;

class TestJobRegistry : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_jail;
    int m_serial = 0;

    // A job of `session` running `program` with `arguments`, not started.
    BackgroundJob *makeJob(const QString &session, const QString &program,
                           const QStringList &arguments, bool interactive = false)
    {
        JobSpec spec;
        spec.jailProgram = m_jail;
        spec.program = program;
        spec.arguments = arguments;
        spec.interactiveInput = interactive;
        spec.timeoutMs = 30000;
        // A policy the jail would accept: the daemon reads it with the jail's parser before it
        // starts even a stand-in.
        spec.policy.uid = spec.policy.gid = 1000;
        spec.policy.workspace = m_dir.path().toStdString();
        spec.policy.env = {{"PATH", "/usr/bin:/bin"}};
        spec.policy.layers = {jail::Layer::Identity};
        auto *jail = new JailJob(spec);
        auto log = std::make_unique<JobOutputLog>(
                m_dir.filePath(QStringLiteral("log%1").arg(++m_serial)), 1024 * 1024);
        QString error;
        if (!log->open(&error))
            qFatal("%s", qPrintable(error));
        BackgroundJob::Description description{QStringLiteral("test"), program, interactive, 30,
                                               QString()};
        return new BackgroundJob(
                unguessableId("job_"), session, description, jail, std::move(log),
                [](const JobResult &result) {
                    return ToolResult::structured(
                            {{QStringLiteral("exit_code"), result.exitCode.value_or(-1)}});
                });
    }

    BackgroundJob *startJob(JobRegistry &registry, const QString &session, const QString &program,
                            const QStringList &arguments, bool interactive = false)
    {
        BackgroundJob *job = makeJob(session, program, arguments, interactive);
        registry.add(job);
        job->start();
        return job;
    }

    static QByteArray allOutput(const BackgroundJob &job)
    {
        QString error;
        const std::optional<OutputWindow> window = job.output().read(0, 1 << 20, &error);
        return window ? window->bytes : QByteArray();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_jail = m_dir.filePath(QStringLiteral("fake-jail"));
        QFile script(m_jail);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\n"
                     "while [ \"$#\" -gt 0 ] && [ \"$1\" != \"--\" ]; do shift; done\n"
                     "shift\nexec \"$@\"\n");
        script.close();
        QVERIFY(script.setPermissions(QFile::ReadOwner | QFile::ExeOwner));
    }

    void idsAreLongRandomAndDistinct()
    {
        const QRegularExpression shape(QStringLiteral("^job_[0-9a-f]{32}$"));
        QSet<QString> seen;
        for (int i = 0; i < 1000; ++i) {
            const QString id = unguessableId("job_");
            QVERIFY2(shape.match(id).hasMatch(), qPrintable(id));
            seen.insert(id);
        }
        QCOMPARE(seen.size(), 1000);
    }

    void anotherSessionFindsNoJob()
    {
        JobRegistry registry({4, 16, 16});
        BackgroundJob *job =
                startJob(registry, QStringLiteral("A"), QStringLiteral("/bin/true"), {});
        QCOMPARE(registry.find(QStringLiteral("A"), job->id()), job);
        QCOMPARE(registry.find(QStringLiteral("B"), job->id()), nullptr);
        QCOMPARE(registry.find(QString(), job->id()), nullptr);
        QCOMPARE(registry.find(QStringLiteral("A"), job->id().toUpper()), nullptr);
        QVERIFY(registry.jobsOf(QStringLiteral("B")).isEmpty());
        QCOMPARE(registry.jobsOf(QStringLiteral("A")).size(), 1);
        // The message is the same as for an id that never existed.
        QVERIFY(JobRegistry::noSuchJob(job->id()).startsWith(QStringLiteral("no such job: ")));
        QTRY_VERIFY_WITH_TIMEOUT(!job->isRunning(), 10000);
    }

    void capsRefuseWithTheSettingNamed()
    {
        JobRegistry registry({2, 3, 16});
        const QString a = QStringLiteral("A"), b = QStringLiteral("B");
        QVERIFY(registry.refusal(a, {}).isEmpty());
        startJob(registry, a, QStringLiteral("/bin/sleep"), {QStringLiteral("30")});
        BackgroundJob *second =
                startJob(registry, a, QStringLiteral("/bin/sleep"), {QStringLiteral("30")});
        QVERIFY(registry.refusal(a, {}).contains(QStringLiteral("JOB_MAX_PER_SESSION")));
        QVERIFY(registry.refusal(b, {}).isEmpty());
        startJob(registry, b, QStringLiteral("/bin/sleep"), {QStringLiteral("30")});
        QCOMPARE(registry.running(), 3);
        QVERIFY(registry.refusal(b, {}).contains(QStringLiteral("JOB_MAX_TOTAL")));
        // An ended job frees its place.
        QSignalSpy ended(second, &BackgroundJob::finished);
        second->kill();
        QVERIFY(ended.wait(10000));
        QCOMPARE(registry.running(a), 1);
        QVERIFY(registry.refusal(a, {}).isEmpty());
        QVERIFY(registry.refusal(b, {}).isEmpty());
        registry.endSession(a);
        registry.endSession(b);
    }

    void sessionEndKillsItsJobsOnly()
    {
        JobRegistry registry({4, 16, 16});
        BackgroundJob *mine = startJob(registry, QStringLiteral("A"), QStringLiteral("/bin/sleep"),
                                       {QStringLiteral("30")});
        BackgroundJob *other = startJob(registry, QStringLiteral("B"), QStringLiteral("/bin/sleep"),
                                        {QStringLiteral("30")});
        QPointer<BackgroundJob> mineGuard(mine);
        const QString mineId = mine->id();
        registry.endSession(QStringLiteral("A"));
        QCOMPARE(registry.find(QStringLiteral("A"), mineId), nullptr);
        // Killed, then deleted once it has ended.
        QTRY_VERIFY_WITH_TIMEOUT(mineGuard.isNull(), 10000);
        QVERIFY(other->isRunning());
        QCOMPARE(registry.running(), 1);
        registry.endSession(QStringLiteral("B"));
    }

    void keptJobOutlivesItsSessionUntilAttached()
    {
        JobRegistry::Limits limits;
        limits.keepDetachedSeconds = 1;
        JobRegistry registry(limits);
        BackgroundJob *kept = startJob(registry, QStringLiteral("A"), QStringLiteral("/bin/sleep"),
                                       {QStringLiteral("30")});
        BackgroundJob *dropped = startJob(registry, QStringLiteral("A"),
                                          QStringLiteral("/bin/sleep"), {QStringLiteral("30")});
        QPointer<BackgroundJob> droppedGuard(dropped);
        const QString keptId = kept->id();
        const QString droppedId = dropped->id();
        // A live session's job cannot be taken.
        QCOMPARE(registry.attach(QStringLiteral("B"), QString(), keptId), nullptr);
        registry.endSession(QStringLiteral("A"));
        // Detached: no session finds it, not even the old one; it still runs and counts.
        QCOMPARE(registry.find(QStringLiteral("A"), keptId), nullptr);
        QVERIFY(kept->isRunning());
        QCOMPARE(registry.running(), 2);
        // Only the principal that started it may take it over.
        QCOMPARE(registry.attach(QStringLiteral("B"), QStringLiteral("another"), keptId), nullptr);
        QCOMPARE(registry.attach(QStringLiteral("B"), QString(), keptId), kept);
        QCOMPARE(registry.find(QStringLiteral("B"), keptId), kept);
        // Attached once: a third session cannot take it again.
        QCOMPARE(registry.attach(QStringLiteral("C"), QString(), keptId), nullptr);
        // The job nobody attached is killed when the keep time is over.
        QTRY_VERIFY_WITH_TIMEOUT(droppedGuard.isNull(), 10000);
        QCOMPARE(registry.find(QString(), droppedId), nullptr);
        QVERIFY(kept->isRunning());
        registry.endSession(QStringLiteral("B"));
        QTRY_VERIFY_WITH_TIMEOUT(registry.find(QStringLiteral("B"), keptId) == nullptr, 10000);
        // Within its keep time a detached job was B's; after B's end and the keep time it is gone.
        QTRY_COMPARE_WITH_TIMEOUT(registry.running(), 0, 10000);
    }

    void finishedJobsAreKeptWithinTheBound()
    {
        JobRegistry registry({8, 16, 2});
        QList<QString> ids;
        for (int i = 0; i < 4; ++i) {
            BackgroundJob *job = startJob(registry, QStringLiteral("A"),
                                          QStringLiteral("/bin/echo"), {QString::number(i)});
            ids.append(job->id());
            QSignalSpy ended(job, &BackgroundJob::finished);
            QVERIFY(ended.wait(10000));
        }
        const QList<BackgroundJob *> kept = registry.jobsOf(QStringLiteral("A"));
        QCOMPARE(kept.size(), 2);
        QCOMPARE(kept.at(0)->id(), ids.at(2));
        QCOMPARE(kept.at(1)->id(), ids.at(3));
        QCOMPARE(allOutput(*kept.at(1)), QByteArray("3\n"));
        const QJsonObject status = kept.at(1)->status();
        QCOMPARE(status.value(QStringLiteral("state")).toString(), QStringLiteral("exited"));
        QCOMPARE(status.value(QStringLiteral("result"))
                         .toObject()
                         .value(QStringLiteral("exit_code")),
                 0);
    }

    void interactiveInputReachesTheProgram()
    {
        JobRegistry registry({4, 16, 16});
        BackgroundJob *job =
                startJob(registry, QStringLiteral("A"), QStringLiteral("/bin/cat"), {}, true);
        QString error;
        QVERIFY2(job->writeInput("first\n", false, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(allOutput(*job), QByteArray("first\n"), 10000);
        QVERIFY(job->writeInput("second\n", true, &error));
        // cat ends at end of input.
        QTRY_VERIFY_WITH_TIMEOUT(!job->isRunning(), 10000);
        QCOMPARE(allOutput(*job), QByteArray("first\nsecond\n"));
        QVERIFY(!job->writeInput("late\n", false, &error));
        QVERIFY(error.contains(QStringLiteral("has ended")));
    }

    void nonInteractiveJobRefusesInput()
    {
        JobRegistry registry({4, 16, 16});
        BackgroundJob *job = startJob(registry, QStringLiteral("A"), QStringLiteral("/bin/sleep"),
                                      {QStringLiteral("30")});
        QString error;
        QVERIFY(!job->writeInput("x\n", false, &error));
        QVERIFY(error.contains(QStringLiteral("interactive")));
        registry.endSession(QStringLiteral("A"));
    }

    void outputLogReadsWindowsAndDropsBeyondItsCap()
    {
        JobOutputLog log(m_dir.filePath(QStringLiteral("window.log")), 10);
        QString error;
        QVERIFY(log.open(&error));
        log.append("0123456");
        log.append("789abc");
        QCOMPARE(log.keptBytes(), 10);
        QCOMPARE(log.droppedBytes(), 3);
        std::optional<OutputWindow> window = log.read(3, 4, &error);
        QVERIFY(window);
        QCOMPARE(window->bytes, QByteArray("3456"));
        QCOMPARE(window->nextOffset, 7);
        window = log.read(7, 100, &error);
        QCOMPARE(window->bytes, QByteArray("789"));
        QCOMPARE(window->nextOffset, 10);
        window = log.read(10, 100, &error);
        QVERIFY(window && window->bytes.isEmpty());
        QVERIFY(!log.read(11, 1, &error));
        QVERIFY(error.contains(QStringLiteral("beyond")));
        QVERIFY(!log.read(-1, 1, &error));
    }

    void windowsNeverEndInsideAUtf8Character()
    {
        JobOutputLog log(m_dir.filePath(QStringLiteral("utf8.log")), 1024);
        QString error;
        QVERIFY(log.open(&error));
        const QByteArray text = QStringLiteral("aé€😀b").toUtf8(); // 1, 2, 3, 4, 1 bytes
        log.append(text);
        QByteArray joined;
        // Any window of at least 4 bytes holds a whole character.
        for (qint64 limit : {4, 5, 7}) {
            joined.clear();
            qint64 offset = 0;
            while (offset < log.keptBytes()) {
                const std::optional<OutputWindow> window = log.read(offset, limit, &error);
                QVERIFY(window && !window->bytes.isEmpty());
                QVERIFY(QString::fromUtf8(window->bytes).toUtf8() == window->bytes);
                joined += window->bytes;
                offset = window->nextOffset;
            }
            QCOMPARE(joined, text);
        }
        QCOMPARE(utf8BoundaryPrefix(QByteArray("a\xe2\x82", 3)), 1);
        QCOMPARE(utf8BoundaryPrefix(QByteArray("\xe2\x82\xac", 3)), 3);
        QCOMPARE(utf8BoundaryPrefix(QByteArray("ab", 2)), 2);
    }

    void logFileIsPrivateAndRemovedWithTheLog()
    {
        const QString path = m_dir.filePath(QStringLiteral("private.log"));
        {
            JobOutputLog log(path, 1024);
            QString error;
            QVERIFY(log.open(&error));
            struct stat info
            {
            };
            QCOMPARE(::stat(QFile::encodeName(path).constData(), &info), 0);
            QCOMPARE(info.st_mode & 07777, mode_t(0600));
            // Exclusive creation: an existing file is never reused.
            JobOutputLog second(path, 1024);
            QVERIFY(!second.open(&error));
        }
        QVERIFY(!QFile::exists(path));
    }
};

QTEST_GUILESS_MAIN(TestJobRegistry)
#include "tst_jobregistry.moc"
