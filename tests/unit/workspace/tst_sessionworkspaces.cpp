// SessionWorkspaces: which directory a session gets in shared and per-session mode, that
// per-session directories are distinct, unguessable and unlistable, that a session's
// directory is removed after its end (symbolic links inside are removed, never followed), and
// never while a job holds it, even once the SessionWorkspaces itself is gone.

#include "workspace/SessionWorkspaces.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include <sys/stat.h>
#include <unistd.h>

using namespace cmcp;

class TestSessionWorkspaces : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    Workspace sharedWorkspace() const
    {
        return Workspace(m_dir.filePath(QStringLiteral("root/workspace")), 0);
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void modesAreReadFromTheirNames()
    {
        QCOMPARE(SessionWorkspaces::modeFromText(QStringLiteral("shared")),
                 SessionWorkspaces::Mode::Shared);
        QCOMPARE(SessionWorkspaces::modeFromText(QStringLiteral("session")),
                 SessionWorkspaces::Mode::PerSession);
        QVERIFY(!SessionWorkspaces::modeFromText(QStringLiteral("Session")));
    }

    void sharedModeGivesEverySessionTheSharedWorkspace()
    {
        SessionWorkspaces workspaces(sharedWorkspace(), SessionWorkspaces::Mode::Shared, 0);
        QString error;
        const auto a = workspaces.forSession(QStringLiteral("A"), &error);
        const auto b = workspaces.forSession(QStringLiteral("B"), &error);
        QVERIFY(a && b);
        QCOMPARE(a->path(), sharedWorkspace().path());
        QCOMPARE(b->path(), sharedWorkspace().path());
    }

    void perSessionModeGivesEachSessionItsOwnDirectory()
    {
        SessionWorkspaces workspaces(sharedWorkspace(), SessionWorkspaces::Mode::PerSession, 0);
        QString error;
        const auto a = workspaces.forSession(QStringLiteral("A"), &error);
        QVERIFY2(a, qPrintable(error));
        const auto again = workspaces.forSession(QStringLiteral("A"), &error);
        const auto b = workspaces.forSession(QStringLiteral("B"), &error);
        QVERIFY(again && b);
        QCOMPARE(again->path(), a->path());
        QVERIFY(a->path() != b->path());
        QVERIFY(QFileInfo(a->path()).isDir());
        QVERIFY(QFileInfo(b->path()).isDir());
        // Beside the shared workspace, never inside it; named by 128 random bits, not the id.
        const QString sessions = workspaces.sessionsDirectory();
        QCOMPARE(QFileInfo(a->path()).absolutePath(), sessions);
        QVERIFY(!a->path().startsWith(sharedWorkspace().path() + u'/'));
        QVERIFY(!a->path().contains(QStringLiteral("/A")));
        QCOMPARE(QFileInfo(a->path()).fileName().size(), 3 + 32);
        // Others may pass through the sessions directory but not list it.
        struct stat info
        {
        };
        QCOMPARE(::stat(QFile::encodeName(sessions).constData(), &info), 0);
        QCOMPARE(info.st_mode & 0777, mode_t(0711));
        workspaces.endSession(QStringLiteral("A"));
        workspaces.endSession(QStringLiteral("B"));
    }

    void endedSessionsDirectoryIsRemovedWithoutFollowingLinks()
    {
        SessionWorkspaces workspaces(sharedWorkspace(), SessionWorkspaces::Mode::PerSession, 0);
        QString error;
        const auto a = workspaces.forSession(QStringLiteral("A"), &error);
        QVERIFY(a);
        // A link to a directory outside: removing the workspace must not empty its target.
        const QString outside = m_dir.filePath(QStringLiteral("outside"));
        QVERIFY(QDir().mkpath(outside));
        QFile keep(outside + QStringLiteral("/keep.txt"));
        QVERIFY(keep.open(QIODevice::WriteOnly));
        keep.close();
        QVERIFY(QDir().mkpath(a->path() + QStringLiteral("/sub/deeper")));
        QVERIFY(QFile::link(outside, a->path() + QStringLiteral("/sub/link")));
        QSignalSpy ended(&workspaces, &SessionWorkspaces::sessionEnded);
        workspaces.endSession(QStringLiteral("A"));
        QCOMPARE(ended.size(), 1);
        // An ended session gets no new directory.
        QVERIFY(!workspaces.forSession(QStringLiteral("A"), &error));
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(a->path()), 5000);
        QVERIFY(QFile::exists(outside + QStringLiteral("/keep.txt")));
    }

    void keptDirectoryOutlivesItsKeepTimeThenGoes()
    {
        SessionWorkspaces workspaces(sharedWorkspace(), SessionWorkspaces::Mode::PerSession, 1);
        QString error;
        const auto a = workspaces.forSession(QStringLiteral("A"), &error);
        QVERIFY(a);
        QElapsedTimer sinceEnd;
        sinceEnd.start();
        workspaces.endSession(QStringLiteral("A"));
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(a->path()), 5000);
        QVERIFY2(sinceEnd.elapsed() >= 700, qPrintable(QString::number(sinceEnd.elapsed())));
    }

    // Its holds count its jobs (a restore waits for none to run).
    void theSharedWorkspaceCountsItsJobs()
    {
        SessionWorkspaces workspaces(sharedWorkspace(), SessionWorkspaces::Mode::Shared, 0);
        QString error;
        const auto shared = workspaces.forSession(QStringLiteral("A"), &error);
        QVERIFY(shared);
        SessionWorkspaces::Hold hold = workspaces.holdForJob(*shared);
        QCOMPARE(workspaces.jobsIn(*shared), 1);
        workspaces.endSession(QStringLiteral("A"));
        hold.reset();
        QCOMPARE(workspaces.jobsIn(*shared), 0);
    }

    // A job taken over by another session (job_attach) keeps running in its first session's
    // workspace: the directory stays, with the job's files, until the last job holding it ends.
    void aHeldWorkspaceOutlivesItsSessionUntilItsLastJobEnds()
    {
        SessionWorkspaces workspaces(sharedWorkspace(), SessionWorkspaces::Mode::PerSession, 0);
        QString error;
        const auto a = workspaces.forSession(QStringLiteral("A"), &error);
        QVERIFY(a);
        const QString file = a->path() + QStringLiteral("/result.txt");
        QFile result(file);
        QVERIFY(result.open(QIODevice::WriteOnly));
        result.close();
        SessionWorkspaces::Hold first = workspaces.holdForJob(*a);
        SessionWorkspaces::Hold second = workspaces.holdForJob(*a);
        QVERIFY(first && second);
        const auto b = workspaces.forSession(QStringLiteral("B"), &error);
        QVERIFY(b);
        workspaces.endSession(QStringLiteral("A"));
        // A's keep time is over once that of B, ended after it and held by no job, is.
        workspaces.endSession(QStringLiteral("B"));
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(b->path()), 5000);
        workspaces.waitForRemovals();
        QVERIFY(QFile::exists(file));
        first.reset(); // a hold released starts its removal at once, if it is the last
        workspaces.waitForRemovals();
        QVERIFY(QFile::exists(file));
        second.reset();
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(a->path()), 5000);
    }

    // The server stops while a job still runs: the job is killed after the SessionWorkspaces
    // has gone, and its workspace goes with it then, not before.
    void aHoldOutlivingItsSessionWorkspacesRemovesTheDirectoryWhenReleased()
    {
        auto workspaces = std::make_unique<SessionWorkspaces>(
                sharedWorkspace(), SessionWorkspaces::Mode::PerSession, 0);
        QString error;
        const auto a = workspaces->forSession(QStringLiteral("A"), &error);
        const auto b = workspaces->forSession(QStringLiteral("B"), &error);
        QVERIFY(a && b);
        SessionWorkspaces::Hold hold = workspaces->holdForJob(*a);
        workspaces.reset();
        QVERIFY(QFileInfo::exists(a->path()));
        QVERIFY(!QFileInfo::exists(b->path()));
        hold.reset();
        QVERIFY(!QFileInfo::exists(a->path()));
    }

    void leftoversOfAPreviousRunAreRemoved()
    {
        SessionWorkspaces workspaces(sharedWorkspace(), SessionWorkspaces::Mode::PerSession, 0);
        const QString old = workspaces.sessionsDirectory() + QStringLiteral("/ws_left");
        QVERIFY(QDir().mkpath(old + QStringLiteral("/inner")));
        const QString outside = m_dir.filePath(QStringLiteral("outside-leftovers"));
        QVERIFY(QDir().mkpath(outside + QStringLiteral("/kept")));
        QVERIFY(QFile::link(outside, old + QStringLiteral("/inner/link")));
        QVERIFY(QFile::link(outside, workspaces.sessionsDirectory() + QStringLiteral("/ws_link")));
        QString error;
        QVERIFY2(workspaces.removeLeftovers(&error), qPrintable(error));
        QVERIFY(!QFileInfo::exists(old));
        QVERIFY(!QFileInfo(workspaces.sessionsDirectory() + QStringLiteral("/ws_link"))
                         .isSymLink());
        QVERIFY(QFileInfo::exists(outside + QStringLiteral("/kept")));
    }
};

QTEST_GUILESS_MAIN(TestSessionWorkspaces)
#include "tst_sessionworkspaces.moc"
