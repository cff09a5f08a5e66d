// diffTrees: what changed between two trees, when a job owns one of them and does its worst while
// the daemon compares. The walk must finish whatever the tree holds (FIFOs, sockets, devices,
// links out, a FIFO swapped in for a file at any moment, chains thousands of directories deep,
// a million names) and say when it left something out; and it must still find every change of
// an ordinary tree, in path order, with its text diff.

#include "managers/TreeDiff.h"
#include "posix/TreeRemoval.h"
#include "posix/UniqueFd.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cstring>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <future>
#include <optional>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

using namespace cmcp;

namespace {

void writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly), qPrintable(path));
    file.write(content);
}

UniqueFd openTree(const QString &path)
{
    return UniqueFd(
            ::open(QFile::encodeName(path).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

int openDescriptors()
{
    return int(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::Files | QDir::System).size());
}

QStringList describe(const TreeDifference &difference)
{
    QStringList lines;
    for (const QJsonValue &change : difference.changes)
        lines.append(change[QLatin1String("change")].toString() + QLatin1Char(' ')
                     + change[QLatin1String("path")].toString());
    return lines;
}

// A chain of `depth` directories named "d" below `top`, made by descriptors (the path would be
// longer than PATH_MAX), the last one holding a file.
void makeChain(const QString &top, int depth)
{
    UniqueFd current = openTree(top);
    QVERIFY(current.isValid());
    for (int level = 0; level < depth; ++level) {
        QVERIFY(::mkdirat(current.get(), "d", 0755) == 0 || errno == EEXIST);
        current = UniqueFd(::openat(current.get(), "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        QVERIFY(current.isValid());
    }
    const UniqueFd file(::openat(current.get(), "bottom", O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    QVERIFY(file.isValid());
}

} // namespace

class TestTreeDiff : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString before() const { return m_dir->filePath(QStringLiteral("before")); }
    QString after() const { return m_dir->filePath(QStringLiteral("after")); }

    TreeDifference diff(const TreeDiffLimits &limits = {})
    {
        const UniqueFd a = openTree(before());
        const UniqueFd b = openTree(after());
        return diffTrees(a.get(), b.get(), limits);
    }

    // Runs the diff on another thread; none, instead of a hanging suite, when it does not end
    // in time: then every FIFO of `after` is opened for writing, so that a blocked open returns.
    std::optional<TreeDifference> diffWithin(std::chrono::seconds bound,
                                             const TreeDiffLimits &limits = {})
    {
        auto done = std::async(std::launch::async, [this, limits] { return diff(limits); });
        if (done.wait_for(bound) == std::future_status::ready)
            return done.get();
        while (done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
            unblockFifos();
        return std::nullopt;
    }

    void unblockFifos()
    {
        for (const QString &name : QDir(after()).entryList(QDir::System | QDir::Hidden)) {
            const QByteArray path = QFile::encodeName(QDir(after()).filePath(name));
            struct stat status
            {
            };
            if (::lstat(path.constData(), &status) == 0 && S_ISFIFO(status.st_mode)) {
                const int fd = ::open(path.constData(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
                if (fd >= 0)
                    ::close(fd);
            }
        }
    }

private Q_SLOTS:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        QVERIFY(QDir().mkpath(before()));
        QVERIFY(QDir().mkpath(after()));
    }

    // By descriptors: a chain deeper than PATH_MAX defeats a removal by paths.
    void cleanup()
    {
        const UniqueFd top = openTree(m_dir->path());
        QString error;
        for (const QByteArray name : {QByteArrayLiteral("before"), QByteArrayLiteral("after")})
            QVERIFY2(removeTreeAt(top.get(), name, &error), qPrintable(error));
        m_dir.reset();
    }

    void findsEveryChangeInPathOrder()
    {
        QVERIFY(QDir().mkpath(before() + QStringLiteral("/gone/inner")));
        QVERIFY(QDir().mkpath(after() + QStringLiteral("/src")));
        QVERIFY(QDir().mkpath(before() + QStringLiteral("/src")));
        writeFile(before() + QStringLiteral("/gone/inner/x"), "x");
        writeFile(before() + QStringLiteral("/src/main.py"), "print(1)\n");
        writeFile(after() + QStringLiteral("/src/main.py"), "print(2)\n");
        writeFile(before() + QStringLiteral("/same.txt"), "same");
        writeFile(after() + QStringLiteral("/same.txt"), "same");
        writeFile(after() + QStringLiteral("/new.txt"), "new");

        const TreeDifference difference = diff();
        QVERIFY(!difference.truncated);
        QCOMPARE(describe(difference),
                 QStringList({QStringLiteral("removed gone"), QStringLiteral("removed gone/inner"),
                              QStringLiteral("removed gone/inner/x"),
                              QStringLiteral("added new.txt"),
                              QStringLiteral("modified src/main.py")}));
        const QString text = difference.changes.last()[QLatin1String("diff")].toString();
        QVERIFY2(text.contains(QLatin1String("-print(1)"))
                         && text.contains(QLatin1String("+print(2)")),
                 qPrintable(text));
    }

    // Special files are described, never opened: an open of a FIFO would wait for a writer, of
    // a device would reach its driver; a link is compared by its target, not followed.
    void specialFilesAreNeverOpened()
    {
        QVERIFY(::mkfifo(QFile::encodeName(before() + QStringLiteral("/pipe")).constData(), 0644)
                == 0);
        QVERIFY(::mkfifo(QFile::encodeName(after() + QStringLiteral("/pipe")).constData(), 0600)
                == 0);
        QVERIFY(::mkfifo(QFile::encodeName(after() + QStringLiteral("/newpipe")).constData(), 0644)
                == 0);
        QVERIFY(QFile::link(QStringLiteral("/etc/passwd"), after() + QStringLiteral("/out")));
        QVERIFY(QFile::link(QStringLiteral("/etc"), before() + QStringLiteral("/outdir")));
        QVERIFY(QFile::link(QStringLiteral("/"), after() + QStringLiteral("/outdir")));
        const int socketFd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        const QByteArray socketPath = QFile::encodeName(after() + QStringLiteral("/sock"));
        QVERIFY(size_t(socketPath.size()) < sizeof address.sun_path);
        std::memcpy(address.sun_path, socketPath.constData(), size_t(socketPath.size()));
        QVERIFY(::bind(socketFd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0);
        ::close(socketFd);
        const bool devices =
                ::mknod(QFile::encodeName(after() + QStringLiteral("/zero")).constData(),
                        S_IFCHR | 0666, makedev(1, 5))
                == 0;

        const std::optional<TreeDifference> difference = diffWithin(std::chrono::seconds(10));
        QVERIFY2(difference, "the diff did not end: an open blocked");
        QStringList expected{QStringLiteral("added newpipe"), QStringLiteral("added out"),
                             QStringLiteral("modified outdir"), QStringLiteral("modified pipe"),
                             QStringLiteral("added sock")};
        if (devices)
            expected.append(QStringLiteral("added zero"));
        QCOMPARE(describe(*difference), expected);
    }

    // The attack: a job renames a FIFO over a file the walk listed as regular, at any moment
    // (with inotify it can wait for the walk to arrive). The open must not block, and what is
    // opened must be the inode listed or nothing.
    void aFifoSwappedInForAFileNeverBlocks()
    {
        QVERIFY(QDir().mkpath(before() + QStringLiteral("/a")));
        QVERIFY(QDir().mkpath(after() + QStringLiteral("/a")));
        for (int i = 0; i < 50; ++i) {
            writeFile(before() + QStringLiteral("/a/f%1").arg(i), QByteArray(4096, 'a'));
            writeFile(after() + QStringLiteral("/a/f%1").arg(i), QByteArray(4096, 'b'));
        }
        writeFile(before() + QStringLiteral("/z.txt"), "old");
        std::atomic<bool> stop{false};
        const QByteArray target = QFile::encodeName(after() + QStringLiteral("/z.txt"));
        const QByteArray fifo = QFile::encodeName(after() + QStringLiteral("/.fifo"));
        const QByteArray file = QFile::encodeName(after() + QStringLiteral("/.file"));
        std::thread mutator([&] {
            while (!stop) {
                ::mkfifo(fifo.constData(), 0644);
                const int fd = ::open(file.constData(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd >= 0) {
                    (void)::write(fd, "new", 3);
                    ::close(fd);
                }
                ::rename(file.constData(), target.constData());
                ::rename(fifo.constData(), target.constData());
            }
        });
        const auto stopMutator = qScopeGuard([&] {
            stop = true;
            mutator.join();
        });
        for (int round = 0; round < 200; ++round) {
            const std::optional<TreeDifference> difference = diffWithin(std::chrono::seconds(10));
            QVERIFY2(difference, "the diff did not end: an open blocked on the FIFO");
            QVERIFY(!difference->truncated);
            QVERIFY(describe(*difference).contains(QStringLiteral("modified a/f7")));
        }
    }

    // 15,000 levels overflowed the stack of a recursive walk and held a descriptor per level.
    // Now nothing deeper than the budget is entered, the result says so, and the descriptors it
    // used are given back.
    void aDeepChainIsLeftOutBelowTheDepthBound()
    {
        makeChain(after(), 15000);
        const int descriptors = openDescriptors();
        const std::optional<TreeDifference> difference = diffWithin(std::chrono::seconds(60));
        QVERIFY(difference && difference->truncated);
        QVERIFY2(difference->truncatedBecause.contains(QLatin1String("256 levels")),
                 qPrintable(difference->truncatedBecause));
        QCOMPARE(difference->changes.size(), 257); // the top's "d" and 256 levels below it
        QCOMPARE(openDescriptors(), descriptors);
    }

    void aChainWithinTheBoundIsWalkedWhole()
    {
        makeChain(after(), 100);
        const TreeDifference difference = diff();
        QVERIFY(!difference.truncated);
        QCOMPARE(difference.changes.size(), 101);
        QVERIFY(difference.changes.last()[QLatin1String("path")].toString().endsWith(
                QLatin1String("/d/bottom")));
    }

    // The walk stops once it holds as many changes as it may return: it does not go on walking
    // the rest of a huge tree to throw it away.
    void theChangeLimitStopsTheWalk()
    {
        for (int i = 0; i < 300; ++i)
            writeFile(after() + QStringLiteral("/f%1").arg(i, 3, 10, QLatin1Char('0')), "x");
        TreeDiffLimits limits;
        limits.maxChanges = 10;
        const TreeDifference difference = diff(limits);
        QVERIFY(difference.truncated);
        QCOMPARE(difference.changes.size(), 10);
        QCOMPARE(difference.truncatedBecause, QStringLiteral("more than 10 changes"));
    }

    void theNameBudgetStopsTheWalk()
    {
        for (int i = 0; i < 300; ++i)
            writeFile(after() + QStringLiteral("/f%1").arg(i), "x");
        TreeDiffLimits limits;
        limits.walk.maxEntries = 100;
        const TreeDifference difference = diff(limits);
        QVERIFY(difference.truncated);
        QCOMPARE(difference.truncatedBecause, QStringLiteral("stopped after 100 names"));
        QVERIFY(difference.changes.size() <= 100);
    }

    void theByteBudgetStopsTheWalk()
    {
        for (int i = 0; i < 20; ++i) {
            writeFile(before() + QStringLiteral("/f%1").arg(i), QByteArray(64 * 1024, 'a'));
            writeFile(after() + QStringLiteral("/f%1").arg(i), QByteArray(64 * 1024, 'b'));
        }
        TreeDiffLimits limits;
        limits.walk.maxBytes = 256 * 1024;
        const TreeDifference difference = diff(limits);
        QVERIFY(difference.truncated);
        QVERIFY2(difference.truncatedBecause.startsWith(QLatin1String("stopped after reading")),
                 qPrintable(difference.truncatedBecause));
        QVERIFY(difference.changes.size() < 20);
    }

    void theTimeBudgetStopsTheWalk()
    {
        for (int i = 0; i < 50; ++i)
            writeFile(after() + QStringLiteral("/f%1").arg(i), "x");
        TreeDiffLimits limits;
        limits.walk.time = std::chrono::milliseconds(0);
        const TreeDifference difference = diff(limits);
        QVERIFY(difference.truncated);
        QVERIFY2(difference.truncatedBecause.startsWith(QLatin1String("stopped after 0 s")),
                 qPrintable(difference.truncatedBecause));
    }
};

QTEST_GUILESS_MAIN(TestTreeDiff)
#include "tst_treediff.moc"
