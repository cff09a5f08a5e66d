// NamedWorkspaces on plain directories (no workspace volume, so it runs anywhere): a workspace
// is created with its description, found by its owner by name and by id and by nobody else,
// bounded in count and size with the setting named, found again by a new instance (a restart),
// and what a crash left with one half only (a directory without description, a description
// without directory, a description's temporary copy) is removed at load. With an idle time, one
// unused that long is reclaimed, but not while a job holds it.

#include "workspace/NamedWorkspaces.h"
#include "workspace/SessionWorkspaces.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace cmcp;

class TestNamedWorkspaces : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    const Principal m_alice{QStringLiteral("alice")};
    const Principal m_bob{QStringLiteral("bob")};

    Workspace shared() const { return Workspace(m_dir.filePath(QStringLiteral("workspace")), 0); }
    NamedWorkspaces fresh() const { return NamedWorkspaces(shared(), {2, 64}); }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void theOwnerFindsItByNameAndIdAndNobodyElseDoes()
    {
        NamedWorkspaces named = fresh();
        QString error;
        const auto made = named.create(m_alice, QStringLiteral("project"), std::nullopt, &error);
        QVERIFY2(made, qPrintable(error));
        QVERIFY(QFileInfo(made->workspace.path()).isDir());
        QCOMPARE(QFileInfo(made->workspace.path()).absolutePath(), named.directory());
        QVERIFY(named.contains(made->workspace.path()));
        QCOMPARE(made->workspace.quotaBytes(), 0); // no volume: no quota
        struct stat status
        {
        };
        QCOMPARE(::stat(QFile::encodeName(named.directory() + QLatin1Char('/') + made->id
                                          + QStringLiteral(".json"))
                                .constData(),
                        &status),
                 0);
        QCOMPARE(status.st_mode & 07777, mode_t(0600));
        QCOMPARE(::stat(QFile::encodeName(named.directory()).constData(), &status), 0);
        QCOMPARE(status.st_mode & 07777, mode_t(0711));

        QCOMPARE(named.find(m_alice, QStringLiteral("project"), &error)->id, made->id);
        QCOMPARE(named.find(m_alice, made->id, &error)->name, QStringLiteral("project"));
        QString byName, byId, unknown;
        QVERIFY(!named.find(m_bob, QStringLiteral("project"), &byName));
        QVERIFY(!named.find(m_bob, made->id, &byId));
        QVERIFY(!named.find(m_bob, QStringLiteral("nothing"), &unknown));
        QCOMPARE(byName, NamedWorkspaces::noSuchWorkspace(QStringLiteral("project")));
        QCOMPARE(byId, NamedWorkspaces::noSuchWorkspace(made->id));
        QVERIFY(named.of(m_bob).isEmpty());
        // Bob may have a workspace of the same name: another one.
        const auto bobs = named.create(m_bob, QStringLiteral("project"), std::nullopt, &error);
        QVERIFY2(bobs, qPrintable(error));
        QVERIFY(bobs->id != made->id);
        QVERIFY(named.forget(*bobs, &error));
    }

    void countNameAndSizeAreBoundedNamingTheSetting()
    {
        NamedWorkspaces named = fresh();
        QCOMPARE(named.load(), 1);
        QString error;
        QVERIFY(!named.create(m_alice, QStringLiteral("project"), std::nullopt, &error));
        QVERIFY2(error.contains(QStringLiteral("already have a workspace named 'project'")),
                 qPrintable(error));
        for (const char *bad : {"../x", "", ".hidden", "a/b", "x y"}) {
            QVERIFY(!named.create(m_alice, QLatin1String(bad), std::nullopt, &error));
            QVERIFY2(error.startsWith(QStringLiteral("invalid workspace name")), bad);
        }
        QVERIFY(!named.create(m_alice, QStringLiteral("large"), 65, &error));
        QVERIFY2(error.contains(QStringLiteral("SANDBOX_WORKSPACE_NAMED_MAX_MB")),
                 qPrintable(error));
        QVERIFY(named.create(m_alice, QStringLiteral("second"), 64, &error));
        QVERIFY(!named.create(m_alice, QStringLiteral("third"), std::nullopt, &error));
        QVERIFY2(error.contains(QStringLiteral("as many as SANDBOX_WORKSPACE_NAMED_MAX allows")),
                 qPrintable(error));
        QVERIFY(named.forget(*named.find(m_alice, QStringLiteral("second"), &error), &error));
        // A fork needs snapshots: refused without the volume, saying so.
        QVERIFY(!named.fork(m_alice, QStringLiteral("fork"), m_dir.path(), std::nullopt, &error));
        QVERIFY2(error.contains(QStringLiteral("workspace volume")), qPrintable(error));
    }

    void aRestartFindsThemAndRemovesWhatACrashLeftHalfMade()
    {
        NamedWorkspaces before = fresh();
        before.load();
        QString error;
        const QString id = before.find(m_alice, QStringLiteral("project"), &error)->id;
        QFile keep(before.directory() + QLatin1Char('/') + id + QStringLiteral("/kept.txt"));
        QVERIFY(keep.open(QIODevice::WriteOnly) && keep.write("kept") == 4);
        keep.close();
        const QString dir = before.directory() + QLatin1Char('/');
        const QString undescribed = QStringLiteral("ws_00000000000000000000000000000000");
        const QString orphan = QStringLiteral("ws_11111111111111111111111111111111");
        QVERIFY(QDir().mkpath(dir + undescribed + QStringLiteral("/sub")));
        QFile description(dir + orphan + QStringLiteral(".json"));
        QVERIFY(description.open(QIODevice::WriteOnly)
                && description.write(R"({"name":"ghost","owner":"alice"})") > 0);
        description.close();
        QFile temporary(dir + id + QStringLiteral(".json.AbC123"));
        QVERIFY(temporary.open(QIODevice::WriteOnly) && temporary.write("{") == 1);
        temporary.close();

        NamedWorkspaces after = fresh();
        QCOMPARE(after.load(), 1);
        const auto found = after.find(m_alice, QStringLiteral("project"), &error);
        QVERIFY2(found, qPrintable(error));
        QCOMPARE(found->id, id);
        QVERIFY(QFile::exists(found->workspace.path() + QStringLiteral("/kept.txt")));
        QVERIFY(!QFileInfo::exists(dir + undescribed));
        QVERIFY(!QFileInfo::exists(dir + orphan + QStringLiteral(".json")));
        QVERIFY(!QFileInfo::exists(temporary.fileName()));
        QVERIFY(!after.find(m_alice, QStringLiteral("ghost"), &error));

        // Forgotten, it is gone for the next start too, even with its directory still there.
        QVERIFY(after.forget(*found, &error));
        QVERIFY(!after.find(m_alice, id, &error));
        NamedWorkspaces later = fresh();
        QCOMPARE(later.load(), 0);
        QVERIFY(!QFileInfo::exists(found->workspace.path()));
    }

    void anUnusedWorkspaceIsReclaimedAfterTheIdleTimeButNotWhileAJobHoldsIt()
    {
        QTemporaryDir dir;
        const Workspace shared(dir.filePath(QStringLiteral("workspace")), 0);
        SessionWorkspaces workspaces(shared, SessionWorkspaces::Mode::Shared, 0, {8, 64, 1});
        QString error;
        const auto used = workspaces.named().create(m_alice, QStringLiteral("used"), {}, &error);
        const auto held = workspaces.named().create(m_alice, QStringLiteral("held"), {}, &error);
        const auto idle = workspaces.named().create(m_alice, QStringLiteral("idle"), {}, &error);
        QVERIFY2(used && held && idle, qPrintable(error));
        QVERIFY(workspaces.named().idle().isEmpty());
        SessionWorkspaces::Hold job = workspaces.holdForJob(held->workspace);
        // The sweep (every 500 ms with an idle time of 1 s) deletes the unused one only; the
        // used one is touched again and again meanwhile, however slowly this machine runs.
        QElapsedTimer waited;
        waited.start();
        while (workspaces.named().find(m_alice, QStringLiteral("idle"), &error)
               && waited.elapsed() < 10000) {
            workspaces.named().touch(used->id);
            QTest::qWait(50);
        }
        QVERIFY(!workspaces.named().find(m_alice, QStringLiteral("idle"), &error));
        workspaces.waitForRemovals();
        QVERIFY(!QFileInfo::exists(idle->workspace.path()));
        QVERIFY(QFileInfo::exists(used->workspace.path()));
        QVERIFY(workspaces.named().find(m_alice, QStringLiteral("held"), &error));
        QVERIFY(QFileInfo::exists(held->workspace.path()));
        QTest::qWait(1200);
        QVERIFY(workspaces.named().find(m_alice, QStringLiteral("held"), &error));
        // Once its job has ended, the held one goes after the idle time too.
        job.reset();
        QTRY_VERIFY_WITH_TIMEOUT(workspaces.named().of(m_alice).isEmpty(), 5000);
        workspaces.waitForRemovals();
        QVERIFY(!QFileInfo::exists(held->workspace.path()));
        QVERIFY(workspaces.named().of(m_alice).isEmpty());
    }

    void withoutAnIdleTimeNothingIsReclaimed()
    {
        NamedWorkspaces named = fresh();
        named.load();
        QTest::qWait(50);
        QVERIFY(named.idle().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestNamedWorkspaces)
#include "tst_namedworkspaces.moc"
