// firstClosedDirectory: which directory above a workspace shuts a job's uid out, by the owner,
// group and other execute bits as the kernel applies them, and the one-line refusal naming it.

#include "sandbox/WorkspaceReach.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace cmcp;

namespace {

constexpr uid_t kJobUid = 4000123;
constexpr gid_t kJobGid = 4000123;

void setMode(const QString &path, mode_t mode)
{
    QVERIFY(::chmod(QFile::encodeName(path).constData(), mode) == 0);
}

} // namespace

class TestWorkspaceReach : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void openAncestorsLetTheJobThrough()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        setMode(dir.path(), 0755);
        const QString workspace = dir.filePath(QStringLiteral("volume/sandbox/workspace"));
        QVERIFY(QDir().mkpath(workspace));
        setMode(dir.filePath(QStringLiteral("volume")), 0711);
        setMode(dir.filePath(QStringLiteral("volume/sandbox")), 0755);
        setMode(workspace, 0700); // its own mode is not the walk's concern
        QVERIFY(!firstClosedDirectory(workspace, kJobUid, kJobGid));
    }

    void aClosedAncestorIsNamedWithItsMode()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString workspace = dir.filePath(QStringLiteral("volume/sandbox/workspace"));
        QVERIFY(QDir().mkpath(workspace));
        setMode(dir.path(), 0755);
        setMode(dir.filePath(QStringLiteral("volume")), 0750); // group and owner only
        const std::optional<ClosedDirectory> closed =
                firstClosedDirectory(workspace, kJobUid, kJobGid);
        QVERIFY(closed);
        QCOMPARE(closed->path, QDir(dir.path()).canonicalPath() + QStringLiteral("/volume"));
        QCOMPARE(closed->mode, mode_t(0750));
        QCOMPARE(closed->owner, ::geteuid());
        const QString line = closedDirectoryRefusal(workspace, *closed, kJobUid);
        QVERIFY2(line.contains(closed->path + QStringLiteral(" is mode 0750")), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("chmod o+x ") + closed->path), qPrintable(line));
        QVERIFY(!line.contains(QLatin1Char('\n')));
    }

    void theGroupBitCountsForTheJobsGroup()
    {
        if (::geteuid() != 0)
            QSKIP("needs root to give a directory the jobs' group");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        setMode(dir.path(), 0755);
        const QString middle = dir.filePath(QStringLiteral("group"));
        const QString workspace = middle + QStringLiteral("/workspace");
        QVERIFY(QDir().mkpath(workspace));
        QVERIFY(::chown(QFile::encodeName(middle).constData(), 0, kJobGid) == 0);
        setMode(middle, 0710);
        QVERIFY(!firstClosedDirectory(workspace, kJobUid, kJobGid));
        QVERIFY(firstClosedDirectory(workspace, kJobUid, kJobGid + 1));
    }

    void theOwnerBitCountsForTheOwner()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString workspace = dir.filePath(QStringLiteral("workspace"));
        QVERIFY(QDir().mkdir(workspace));
        setMode(dir.path(), 0700);
        QVERIFY(!firstClosedDirectory(workspace, ::geteuid(), kJobGid));
        QVERIFY(firstClosedDirectory(workspace, kJobUid, kJobGid));
    }

    void aSymbolicLinkCountsByItsTarget()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        setMode(dir.path(), 0755);
        const QString closed = dir.filePath(QStringLiteral("closed"));
        QVERIFY(QDir().mkpath(closed + QStringLiteral("/workspace")));
        setMode(closed, 0700);
        const QString link = dir.filePath(QStringLiteral("link"));
        QVERIFY(QFile::link(closed, link));
        const std::optional<ClosedDirectory> found =
                firstClosedDirectory(link + QStringLiteral("/workspace"), kJobUid, kJobGid);
        QVERIFY(found);
        QCOMPARE(found->path, QDir(closed).canonicalPath());
    }
};

QTEST_GUILESS_MAIN(TestWorkspaceReach)
#include "tst_workspacereach.moc"
