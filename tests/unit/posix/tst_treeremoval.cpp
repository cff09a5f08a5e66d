// removeTreeAt: a tree that untrusted users can write is removed without ever reaching outside
// it, whatever they do to it while it is being removed. Each attack swaps names for symbolic
// links to a victim directory (or moves directories) at one step of the removal, through the
// removal's probe, and checks that every file of the victim is still there; hard links and
// mount points inside the tree are covered too.

#include "posix/TreeRemoval.h"
#include "posix/UniqueFd.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cmcp;

namespace {

void writeFile(const QString &path, const QByteArray &content = "data")
{
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly), qPrintable(path));
    file.write(content);
}

} // namespace

class TestTreeRemoval : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    UniqueFd m_topFd;

    QString path(const QString &relative) const { return m_dir->filePath(relative); }

    // victim/: what an attacker wants emptied, with a file, a subdirectory and a file in it.
    void makeVictim()
    {
        QVERIFY(QDir().mkpath(path(QStringLiteral("victim/sub"))));
        writeFile(path(QStringLiteral("victim/keep.txt")));
        writeFile(path(QStringLiteral("victim/sub/keep.txt")));
    }
    void verifyVictimIntact() const
    {
        QVERIFY(QFile::exists(path(QStringLiteral("victim/keep.txt"))));
        QVERIFY(QFile::exists(path(QStringLiteral("victim/sub/keep.txt"))));
    }
    // tree/: a few directories of files, tree/D holding the most.
    void makeTree()
    {
        for (const char *directory : {"tree/A", "tree/D/inner", "tree/Z"})
            QVERIFY(QDir().mkpath(path(QLatin1String(directory))));
        for (int i = 0; i < 20; ++i) {
            writeFile(path(QStringLiteral("tree/A/f%1").arg(i)));
            writeFile(path(QStringLiteral("tree/D/f%1").arg(i)));
            writeFile(path(QStringLiteral("tree/D/inner/f%1").arg(i)));
        }
    }
    // Moves `relative` away inside the tree and puts a link to the victim in its place.
    void swapForLinkToVictim(const QString &relative)
    {
        const QString from = path(relative);
        QVERIFY(QFile::rename(from, from + QStringLiteral(".moved")));
        QVERIFY(QFile::link(path(QStringLiteral("victim")), from));
    }
    bool remove(const QByteArray &name, QString *error, const RemovalProbe &probe = {})
    {
        return removeTreeAt(m_topFd.get(), name, error, probe);
    }

private Q_SLOTS:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        m_topFd.reset(::open(QFile::encodeName(m_dir->path()).constData(),
                             O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        QVERIFY(m_topFd.isValid());
        makeVictim();
    }

    void removesATreeOfFilesDirectoriesAndLinks()
    {
        makeTree();
        QVERIFY(QFile::link(path(QStringLiteral("victim")), path(QStringLiteral("tree/A/link"))));
        QVERIFY(QFile::link(path(QStringLiteral("victim/keep.txt")),
                            path(QStringLiteral("tree/filelink"))));
        QVERIFY(QFile::link(QStringLiteral("/nonexistent"), path(QStringLiteral("tree/dangling"))));
        QString error;
        QVERIFY2(remove("tree", &error), qPrintable(error));
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("tree"))));
        verifyVictimIntact();
    }

    void aFileOrALinkAtTheTopIsUnlinked()
    {
        writeFile(path(QStringLiteral("file")));
        QVERIFY(QFile::link(path(QStringLiteral("victim")), path(QStringLiteral("link"))));
        QString error;
        QVERIFY2(remove("file", &error), qPrintable(error));
        QVERIFY2(remove("link", &error), qPrintable(error));
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("file"))));
        QVERIFY(!QFileInfo(path(QStringLiteral("link"))).isSymLink());
        verifyVictimIntact();
        QVERIFY2(remove("missing", &error), "a name that is not there counts as removed");
    }

    void namesThatAreNotWithinTheDirectoryAreRefused()
    {
        QString error;
        for (const QByteArray &name :
             {QByteArray(), QByteArray("."), QByteArray(".."), QByteArray("victim/sub")}) {
            QVERIFY(!remove(name, &error));
            QVERIFY2(error.contains(QLatin1String("not a name within its directory")),
                     qPrintable(error));
        }
        verifyVictimIntact();
    }

    // The listing saw D as a directory; before the removal looks at it, D becomes a link.
    void aDirectorySwappedForALinkAfterTheListingIsUnlinkedNotFollowed()
    {
        makeTree();
        int listings = 0;
        QString error;
        const bool removed = remove("tree", &error, [&](RemovalStep step, int, const QByteArray &) {
            if (step == RemovalStep::Listed && listings++ == 0)
                swapForLinkToVictim(QStringLiteral("tree/D"));
        });
        QVERIFY2(removed, qPrintable(error));
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("tree"))));
        verifyVictimIntact();
    }

    // D was examined and is a directory; between that and opening it, it becomes a link.
    void aDirectorySwappedForALinkJustBeforeItIsOpenedIsNotEntered()
    {
        makeTree();
        QString error;
        const bool removed =
                remove("tree", &error, [&](RemovalStep step, int, const QByteArray &name) {
                    if (step == RemovalStep::Descending && name == "D")
                        swapForLinkToVictim(QStringLiteral("tree/D"));
                });
        QVERIFY2(removed, qPrintable(error));
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("tree"))));
        verifyVictimIntact();
    }

    // While D's files are being unlinked, D is moved away and a link takes its name: the
    // removal goes on in the directory it holds open, and the link is only unlinked.
    void theDirectoryBeingEmptiedMovedAndReplacedByALink()
    {
        makeTree();
        struct stat d
        {
        };
        QVERIFY(::stat(QFile::encodeName(path(QStringLiteral("tree/D"))).constData(), &d) == 0);
        bool swapped = false;
        QString error;
        const bool removed =
                remove("tree", &error, [&](RemovalStep step, int dirFd, const QByteArray &name) {
                    struct stat here
                    {
                    };
                    if (step == RemovalStep::Unlinking && name == "f5" && !swapped
                        && ::fstat(dirFd, &here) == 0 && here.st_ino == d.st_ino) {
                        swapped = true;
                        swapForLinkToVictim(QStringLiteral("tree/D"));
                    }
                });
        QVERIFY(swapped);
        QVERIFY2(removed, qPrintable(error));
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("tree"))));
        verifyVictimIntact();
    }

    // The emptied directory is about to be removed from its parent when its name becomes a link.
    void anEmptiedDirectorySwappedForALinkBeforeItsRemoval()
    {
        makeTree();
        QString error;
        const bool removed =
                remove("tree", &error, [&](RemovalStep step, int, const QByteArray &name) {
                    if (step == RemovalStep::Unlinking && name == "inner")
                        swapForLinkToVictim(QStringLiteral("tree/D/inner"));
                });
        QVERIFY2(removed, qPrintable(error));
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("tree"))));
        verifyVictimIntact();
    }

    // Every directory and file name of the tree is swapped for a link at every step.
    void everyNameSwappedAtEveryStep()
    {
        struct stat top
        {
        };
        QVERIFY(::fstat(m_topFd.get(), &top) == 0);
        for (const RemovalStep when :
             {RemovalStep::Listed, RemovalStep::Descending, RemovalStep::Unlinking}) {
            makeTree();
            QString error;
            const bool removed = remove(
                    "tree", &error, [&](RemovalStep step, int dirFd, const QByteArray &name) {
                        struct stat status
                        {
                        };
                        // Only the tree's own directories: the one holding the victim is not the
                        // tree.
                        if (step != when || ::fstat(dirFd, &status) != 0
                            || status.st_ino == top.st_ino)
                            return;
                        // Whatever the directory holds now becomes a link to the victim.
                        QDir here(QStringLiteral("/proc/self/fd/%1").arg(dirFd));
                        for (const QString &entry : here.entryList(
                                     QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System)) {
                            const QString target = here.filePath(entry);
                            if (entry.endsWith(QLatin1String(".moved"))
                                || QFileInfo(target).isSymLink())
                                continue;
                            if (QFile::rename(target, target + QStringLiteral(".moved")))
                                QFile::link(path(QStringLiteral("victim")), target);
                        }
                        Q_UNUSED(name);
                    });
            QVERIFY2(removed, qPrintable(error));
            QVERIFY(!QFileInfo::exists(path(QStringLiteral("tree"))));
            verifyVictimIntact();
        }
    }

    void aHardLinkToAFileOutsideLeavesThatFile()
    {
        makeTree();
        QVERIFY(::link(QFile::encodeName(path(QStringLiteral("victim/keep.txt"))).constData(),
                       QFile::encodeName(path(QStringLiteral("tree/A/hard"))).constData())
                == 0);
        QString error;
        QVERIFY2(remove("tree", &error), qPrintable(error));
        verifyVictimIntact();
        QFile kept(path(QStringLiteral("victim/keep.txt")));
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("data"));
    }

    // Deeper than the descriptors kept open: the way back up goes through "..".
    void aVeryDeepTreeIsRemoved()
    {
        QString relative = QStringLiteral("tree");
        for (int i = 0; i < 300; ++i)
            relative += QStringLiteral("/d");
        QVERIFY(QDir().mkpath(path(relative)));
        writeFile(path(relative + QStringLiteral("/leaf")));
        QVERIFY(QFile::link(path(QStringLiteral("victim")), path(relative + QStringLiteral("/l"))));
        QString error;
        QVERIFY2(remove("tree", &error), qPrintable(error));
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("tree"))));
        verifyVictimIntact();
    }

    // A directory deep down, whose parent's descriptor was closed for depth, is moved
    // elsewhere while the removal is below it: on the way back up its ".." is no longer the
    // directory the removal came from, and the removal stops rather than go on from a wrong one.
    void aDeepDirectoryMovedDuringItsRemovalStopsIt()
    {
        QString relative = QStringLiteral("tree");
        QString moving;
        for (int i = 0; i < 100; ++i) {
            relative += QStringLiteral("/d");
            if (i == 10)
                moving = relative;
        }
        QVERIFY(QDir().mkpath(path(relative)));
        writeFile(path(relative + QStringLiteral("/leaf")));
        bool moved = false;
        QString error;
        const bool removed =
                remove("tree", &error, [&](RemovalStep step, int, const QByteArray &name) {
                    if (step == RemovalStep::Unlinking && name == "leaf" && !moved)
                        moved = QFile::rename(path(moving), path(QStringLiteral("tree/escaped")));
                });
        QVERIFY(moved);
        QVERIFY(!removed);
        QVERIFY2(error.contains(QLatin1String("was moved while it was being removed")),
                 qPrintable(error));
        verifyVictimIntact();
    }

    // A directory refilled at every listing is given up on instead of looping forever.
    void aDirectoryRefilledForeverIsGivenUpOn()
    {
        makeTree();
        int created = 0;
        QString error;
        const bool removed =
                remove("tree", &error, [&](RemovalStep step, int dirFd, const QByteArray &) {
                    if (step == RemovalStep::Listed) {
                        const QByteArray name = "new" + QByteArray::number(created++);
                        ::close(::openat(dirFd, name.constData(), O_CREAT | O_WRONLY | O_CLOEXEC,
                                         0600));
                    }
                });
        QVERIFY(!removed);
        QVERIFY2(error.contains(QLatin1String("was refilled")), qPrintable(error));
        verifyVictimIntact();
    }

    // A mount inside the tree (a bind mount of the victim, a tmpfs) is left in place, named in
    // the error, and nothing of it is touched. Jobs cannot mount in the daemon's namespace;
    // this is the removal's own guard. Needs root, for a mount namespace of this process.
    void aMountPointInsideIsLeftInPlace()
    {
        if (::geteuid() != 0)
            QSKIP("needs root: mounts inside the tree are made in a private mount namespace");
        QVERIFY(::unshare(CLONE_NEWNS) == 0);
        QVERIFY(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0);
        // A descriptor opened before the unshare walks the old namespace's mounts.
        m_topFd.reset(::open(QFile::encodeName(m_dir->path()).constData(),
                             O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        makeTree();
        QVERIFY(QDir().mkpath(path(QStringLiteral("tree/A/bound"))));
        QVERIFY(::mount(QFile::encodeName(path(QStringLiteral("victim"))).constData(),
                        QFile::encodeName(path(QStringLiteral("tree/A/bound"))).constData(),
                        nullptr, MS_BIND, nullptr)
                == 0);
        QString error;
        QVERIFY(!remove("tree", &error));
        QVERIFY2(error.contains(QLatin1String("bound")) && error.contains(QLatin1String("mount")),
                 qPrintable(error));
        verifyVictimIntact();
        QVERIFY(::umount2(QFile::encodeName(path(QStringLiteral("tree/A/bound"))).constData(),
                          MNT_DETACH)
                == 0);
        QVERIFY2(remove("tree", &error), qPrintable(error));
        verifyVictimIntact();
    }

    void removeTreeGoesByTheParentOfAnAbsolutePath()
    {
        makeTree();
        QString error;
        QVERIFY2(removeTree(path(QStringLiteral("tree")), &error), qPrintable(error));
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("tree"))));
        QVERIFY2(removeTree(path(QStringLiteral("tree")), &error), "a missing path is removed");
        QVERIFY(!removeTree(QStringLiteral("relative/path"), &error));
        QVERIFY2(error.contains(QLatin1String("not an absolute path")), qPrintable(error));
        verifyVictimIntact();
    }

    void removeTreeContentsKeepsTheDirectory()
    {
        makeTree();
        const UniqueFd tree(::open(QFile::encodeName(path(QStringLiteral("tree"))).constData(),
                                   O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        QVERIFY(QFile::link(path(QStringLiteral("victim")), path(QStringLiteral("tree/link"))));
        QString error;
        QVERIFY2(removeTreeContents(tree.get(), &error), qPrintable(error));
        QVERIFY(QFileInfo(path(QStringLiteral("tree"))).isDir());
        QVERIFY(QDir(path(QStringLiteral("tree")))
                        .entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System)
                        .isEmpty());
        verifyVictimIntact();
    }
};

QTEST_GUILESS_MAIN(TestTreeRemoval)
#include "tst_treeremoval.moc"
