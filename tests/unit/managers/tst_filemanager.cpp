// FileManager and ContainedRoot under attack: every escape form a model could try through the
// file tools, run twice, once with openat2 and once with the per-component walk that replaces
// it on kernels without openat2. Nothing outside the workspace may be read, written, listed,
// moved or deleted.
//
// Hard links: a hard link to a file outside the workspace is that file, and no path check can
// tell. A model cannot make one: the file tools create none, and a job would need to see the
// outside file, which its jail does not let it (and fs.protected_hardlinks refuses links to
// files of other users). The test below shows what remains true even so: a write replaces the
// name by rename, so the outside file is never modified through such a link.

#include "workspace/ContainedRoot.h"
#include "managers/FileManager.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cstdio>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
#include <unistd.h>

using namespace cmcp;

class TestFileManager : public QObject
{
    Q_OBJECT
public:
    explicit TestFileManager(ContainedRoot::Resolver resolver) : m_resolver(resolver) { }

private:
    ContainedRoot::Resolver m_resolver;
    QTemporaryDir m_scratch;
    QString m_workspace;
    QString m_outside;
    std::unique_ptr<FileManager> m_files;
    static constexpr gid_t sandboxGid = 4242;

    bool walking() const { return m_resolver == ContainedRoot::Resolver::ComponentWalk; }

    QString inside(const QString &relative) const
    {
        return m_workspace + QLatin1Char('/') + relative;
    }

    static QByteArray contentOf(const QString &path)
    {
        QFile file(path);
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<missing>");
    }
    static void put(const QString &path, const QByteArray &data)
    {
        QDir().mkpath(QFileInfo(path).path());
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(data);
    }
    static void symlink(const QString &target, const QString &link)
    {
        QVERIFY2(::symlink(QFile::encodeName(target).constData(),
                           QFile::encodeName(link).constData())
                         == 0,
                 qPrintable(link));
    }

    FileOutcome<FileReadResult> read(const QString &path) { return m_files->read({.path = path}); }
    FileOutcome<FileWriteResult> write(const QString &path, const QString &content,
                                       std::optional<QString> ifMatch = std::nullopt)
    {
        FileWriteRequest request;
        request.path = path;
        request.content = content;
        request.ifMatch = ifMatch;
        return m_files->write(request);
    }

    void makeManager(FileOptions options = {})
    {
        QString error;
        auto root = ContainedRoot::open(m_workspace, m_resolver, &error);
        QVERIFY2(root, qPrintable(error));
        QCOMPARE(root->resolver(), m_resolver);
        m_files = std::make_unique<FileManager>(Workspace(m_workspace, sandboxGid), root, options);
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_scratch.isValid());
        const QString base = m_scratch.path() + QStringLiteral("/") + QString::number(qrand64());
        m_workspace = base + QStringLiteral("/workspace");
        // A sibling whose name starts like the workspace's: string prefix checks confuse them.
        m_outside = base + QStringLiteral("/workspace-outside");
        QVERIFY(QDir().mkpath(m_workspace));
        put(m_outside + QStringLiteral("/secret.txt"), "SECRET");
        makeManager();
    }

    void readWriteRoundTripCreatesParents()
    {
        const auto written =
                write(QStringLiteral("/deep/er/notes.md"), QStringLiteral("h\u00e9llo\n"));
        QVERIFY2(written.ok(), qPrintable(written.error));
        QCOMPARE(written.value->path, QStringLiteral("deep/er/notes.md"));
        QVERIFY(written.value->created);
        QCOMPARE(contentOf(inside(QStringLiteral("deep/er/notes.md"))),
                 QByteArray("h\xc3\xa9llo\n"));
        const auto read = this->read(QStringLiteral("deep/er/notes.md"));
        QVERIFY2(read.ok(), qPrintable(read.error));
        QCOMPARE(read.value->content, QStringLiteral("h\u00e9llo\n"));
        QCOMPARE(read.value->size, qint64(7));
        QCOMPARE(read.value->sha256, written.value->sha256);
        QVERIFY(read.value->modified > 1.6e9);
    }

    // file_read tries small files on the event loop: larger ones and line windows are deferred
    // to a worker untouched, errors are answered at once.
    void cheapOnlyReadsDeferWhatIsCostly()
    {
        put(inside(QStringLiteral("small.txt")), QByteArray(100, 'a'));
        put(inside(QStringLiteral("large.txt")), QByteArray(101, 'a'));
        FileReadRequest request{.path = QStringLiteral("small.txt"), .cheapOnly = 100};
        const auto small = m_files->read(request);
        QVERIFY(small.ok() && !small.deferred);
        QCOMPARE(small.value->content.size(), 100);

        request.path = QStringLiteral("large.txt");
        const auto large = m_files->read(request);
        QVERIFY(large.deferred && !large.ok() && large.error.isEmpty());

        request.path = QStringLiteral("small.txt");
        request.limit = 1;
        QVERIFY(m_files->read(request).deferred);

        request.path = QStringLiteral("missing.txt");
        const auto missing = m_files->read(request);
        QVERIFY(!missing.deferred && !missing.ok());
        QVERIFY(missing.error.contains(QStringLiteral("missing.txt")));
    }

    // The file tool asks for UTF-8: the same text as decode() gives, without its conversions.
    void readAsUtf8GivesTheDecodedText()
    {
        put(inside(QStringLiteral("bom.txt")), "\xef\xbb\xbfh\xc3\xa9llo\n");
        put(inside(QStringLiteral("bad.txt")), "caf\xe9");
        put(inside(QStringLiteral("bin.dat")), QByteArray("\x00\xff\x01", 3));
        for (const QString &encoding :
             {QStringLiteral("utf-8"), QStringLiteral("latin-1"), QStringLiteral("base64")}) {
            for (const QString &path : {QStringLiteral("bom.txt"), QStringLiteral("bad.txt"),
                                        QStringLiteral("bin.dat")}) {
                FileReadRequest request;
                request.path = path;
                request.encoding = encoding;
                const auto decoded = m_files->read(request);
                request.asUtf8 = true;
                const auto utf8 = m_files->read(request);
                QCOMPARE(utf8.ok(), decoded.ok());
                QCOMPARE(utf8.error, decoded.error);
                if (decoded.ok()) {
                    QVERIFY(utf8.value->content.isEmpty());
                    QCOMPARE(QString::fromUtf8(utf8.value->contentUtf8), decoded.value->content);
                    QCOMPARE(utf8.value->sha256, decoded.value->sha256);
                }
            }
        }
    }

    void absolutePathsMeanTheWorkspaceRoot()
    {
        put(inside(QStringLiteral("etc/passwd.txt")), "inside");
        const auto read = this->read(QStringLiteral("/etc/passwd.txt"));
        QVERIFY2(read.ok(), qPrintable(read.error));
        QCOMPARE(read.value->content, QStringLiteral("inside"));
        QVERIFY(!this->read(QStringLiteral("/etc/hostname.txt")).ok());
    }

    void dotDotAndSiblingPrefixAreRefused()
    {
        for (const QString &path : {QStringLiteral("../workspace-outside/secret.txt"),
                                    QStringLiteral("a/../../workspace-outside/secret.txt")}) {
            const auto read = this->read(path);
            QVERIFY(!read.ok());
            QVERIFY2(read.error.contains(QLatin1String("escapes the workspace")),
                     qPrintable(read.error));
            QVERIFY(!write(path, QStringLiteral("x")).ok());
        }
        QCOMPARE(contentOf(m_outside + QStringLiteral("/secret.txt")), QByteArray("SECRET"));
    }

    void symlinksLeavingAreRefused_data()
    {
        QTest::addColumn<QString>("target");
        QTest::newRow("absolute") << QStringLiteral("%1/secret.txt");
        QTest::newRow("relative") << QStringLiteral("../workspace-outside/secret.txt");
        QTest::newRow("proc root") << QStringLiteral("/proc/self/root%1/secret.txt");
        QTest::newRow("proc fd magic link") << QStringLiteral("/proc/self/fd/0");
    }
    void symlinksLeavingAreRefused()
    {
        QFETCH(QString, target);
        symlink(target.contains(QLatin1String("%1")) ? target.arg(m_outside) : target,
                inside(QStringLiteral("link.txt")));
        const auto read = this->read(QStringLiteral("link.txt"));
        QVERIFY(!read.ok());
        // The walk follows no link at all and says so.
        const QString expected = walking() ? QStringLiteral("symbolic link")
                                           : QStringLiteral("escapes the workspace");
        QVERIFY2(read.error.contains(expected), qPrintable(read.error));
        const auto written = write(QStringLiteral("link.txt"), QStringLiteral("overwritten"));
        QVERIFY(!written.ok());
        QVERIFY2(written.error.contains(QLatin1String("symbolic link")), qPrintable(written.error));
        QCOMPARE(contentOf(m_outside + QStringLiteral("/secret.txt")), QByteArray("SECRET"));
    }

    void symlinkedDirectoryLeavingIsRefused()
    {
        symlink(QStringLiteral("../workspace-outside"), inside(QStringLiteral("escape")));
        QVERIFY(!read(QStringLiteral("escape/secret.txt")).ok());
        QVERIFY(!write(QStringLiteral("escape/new.txt"), QStringLiteral("x")).ok());
        QVERIFY(!write(QStringLiteral("escape/sub/new.txt"), QStringLiteral("x")).ok());
        QVERIFY(!m_files->list({.path = QStringLiteral("escape")}).ok());
        QVERIFY(!m_files->remove(QStringLiteral("escape/secret.txt")).ok());
        QVERIFY(!m_files->move({QStringLiteral("escape/secret.txt"), QStringLiteral("stolen.txt")})
                         .ok());
        QVERIFY(!m_files->move({QStringLiteral("in.txt"), QStringLiteral("escape/planted.txt")})
                         .ok());
        QCOMPARE(QDir(m_outside).entryList(QDir::Files | QDir::NoDotAndDotDot),
                 QStringList{"secret.txt"});
        QCOMPARE(contentOf(m_outside + QStringLiteral("/secret.txt")), QByteArray("SECRET"));
    }

    void symlinksStayingInsideResolveWithOpenat2Only()
    {
        put(inside(QStringLiteral("real/data.txt")), "data");
        symlink(QStringLiteral("real"), inside(QStringLiteral("alias")));
        symlink(QStringLiteral("../real/data.txt"), inside(QStringLiteral("real/../up.txt")));
        const auto viaDirectory = read(QStringLiteral("alias/data.txt"));
        const auto viaFile = read(QStringLiteral("up.txt"));
        if (walking()) {
            QVERIFY(!viaDirectory.ok());
            QVERIFY(!viaFile.ok());
        } else {
            QVERIFY2(viaDirectory.ok(), qPrintable(viaDirectory.error));
            QCOMPARE(viaDirectory.value->content, QStringLiteral("data"));
            QVERIFY(!viaFile.ok()); // "../real" from the root leaves it
        }
    }

    void symlinkLoopsFailAtOnce()
    {
        symlink(QStringLiteral("b.txt"), inside(QStringLiteral("a.txt")));
        symlink(QStringLiteral("a.txt"), inside(QStringLiteral("b.txt")));
        symlink(QStringLiteral("."), inside(QStringLiteral("self")));
        const auto read = this->read(QStringLiteral("a.txt"));
        QVERIFY(!read.ok());
        QVERIFY2(read.error.contains(walking() ? QLatin1String("symbolic link")
                                               : QLatin1String("may not be followed")),
                 qPrintable(read.error));
        const auto selfLoop = m_files->list({.path = QStringLiteral("self/self/self")});
        QCOMPARE(selfLoop.ok(), !walking()); // "." stays inside, so openat2 may follow it
    }

    void fifosSocketsAndDevicesAreRefusedWithoutBlocking()
    {
        QVERIFY(::mkfifo(QFile::encodeName(inside(QStringLiteral("pipe.txt"))).constData(), 0666)
                == 0);
        QElapsedTimer timer;
        timer.start();
        const auto read = this->read(QStringLiteral("pipe.txt"));
        QVERIFY(!read.ok());
        QVERIFY2(read.error.contains(QLatin1String("FIFO")), qPrintable(read.error));
        const auto written = write(QStringLiteral("pipe.txt"), QStringLiteral("x"));
        QVERIFY(!written.ok());
        QVERIFY2(written.error.contains(QLatin1String("FIFO")), qPrintable(written.error));
        QVERIFY(timer.elapsed() < 1000);

        if (::geteuid() != 0)
            return;
        QVERIFY(::mknod(QFile::encodeName(inside(QStringLiteral("zero.txt"))).constData(),
                        S_IFCHR | 0666, makedev(1, 5))
                == 0);
        const auto device = this->read(QStringLiteral("zero.txt"));
        QVERIFY(!device.ok());
        QVERIFY2(device.error.contains(QLatin1String("character device")),
                 qPrintable(device.error));
        QVERIFY(!this->read(QStringLiteral("/")).ok());
        QVERIFY(!this->read(QStringLiteral("..")).ok());
    }

    void writeThroughHardLinkNeverModifiesTheOtherName()
    {
        if (::link(QFile::encodeName(m_outside + QStringLiteral("/secret.txt")).constData(),
                   QFile::encodeName(inside(QStringLiteral("hard.txt"))).constData())
            != 0)
            QSKIP("hard links are refused here (fs.protected_hardlinks)");
        QVERIFY(write(QStringLiteral("hard.txt"), QStringLiteral("replaced")).ok());
        QCOMPARE(contentOf(inside(QStringLiteral("hard.txt"))), QByteArray("replaced"));
        QCOMPARE(contentOf(m_outside + QStringLiteral("/secret.txt")), QByteArray("SECRET"));
    }

    void extensionsAreChecked()
    {
        const auto script = write(QStringLiteral("run.sh"), QStringLiteral("echo"));
        QVERIFY(!script.ok());
        QVERIFY2(script.error.contains(
                         QLatin1String("extension '.sh' is not in FILE_ALLOWED_EXTENSIONS")),
                 qPrintable(script.error));
        QVERIFY(write(QStringLiteral("UPPER.TXT"), QStringLiteral("ok")).ok());
        const auto bare = write(QStringLiteral("Makefile"), QStringLiteral("all:"));
        QVERIFY(!bare.ok());
        QVERIFY2(bare.error.contains(QLatin1String("FILE_ALLOW_NO_EXTENSION")),
                 qPrintable(bare.error));
        QVERIFY(!m_files->move({QStringLiteral("UPPER.TXT"), QStringLiteral("upper.sh")}).ok());
        QVERIFY(QFile::exists(inside(QStringLiteral("UPPER.TXT"))));

        FileOptions options;
        options.allowNoExtension = true;
        makeManager(options);
        QVERIFY(write(QStringLiteral("Makefile"), QStringLiteral("all:")).ok());
        QVERIFY(!write(QStringLiteral("run.sh"), QStringLiteral("echo")).ok());
    }

    void sizeBoundsHoldAndLeaveNoPartialFile()
    {
        FileOptions options;
        options.maxBytes = 1000;
        makeManager(options);
        const auto tooLarge = write(QStringLiteral("big.txt"), QString(1001, QLatin1Char('x')));
        QVERIFY(!tooLarge.ok());
        QVERIFY2(tooLarge.error.contains(QLatin1String("too large")), qPrintable(tooLarge.error));
        QCOMPARE(
                QDir(m_workspace).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                QStringList());

        QByteArray lines;
        for (int i = 0; i < 300; ++i)
            lines += "line " + QByteArray::number(i) + '\n';
        put(inside(QStringLiteral("big.txt")), lines);
        const auto whole = read(QStringLiteral("big.txt"));
        QVERIFY(!whole.ok());
        QVERIFY2(whole.error.contains(QLatin1String("offset and limit")), qPrintable(whole.error));
        FileReadRequest window{.path = QStringLiteral("big.txt")};
        window.offset = 10;
        window.limit = 2;
        const auto part = m_files->read(window);
        QVERIFY2(part.ok(), qPrintable(part.error));
        QCOMPARE(part.value->content, QStringLiteral("line 10\nline 11\n"));
        QCOMPARE(part.value->totalLines, qint64(300));
        QVERIFY(!part.value->endOfFile);
        window.limit = 1000;
        QVERIFY(!m_files->read(window).ok()); // 290 lines hold more than 1000 bytes
    }

    void encodings()
    {
        put(inside(QStringLiteral("binary.txt")), QByteArray("\xff\xfe\x00\x01", 4));
        const auto text = read(QStringLiteral("binary.txt"));
        QVERIFY(!text.ok());
        QVERIFY2(text.error.contains(QLatin1String("base64")), qPrintable(text.error));
        FileReadRequest asBase64{.path = QStringLiteral("binary.txt"),
                                 .encoding = QStringLiteral("base64")};
        const auto blob = m_files->read(asBase64);
        QVERIFY2(blob.ok(), qPrintable(blob.error));
        QCOMPARE(blob.value->content, QStringLiteral("//4AAQ=="));

        FileWriteRequest request{.path = QStringLiteral("copy.txt"),
                                 .content = blob.value->content,
                                 .encoding = QStringLiteral("base64")};
        QVERIFY(m_files->write(request).ok());
        QCOMPARE(contentOf(inside(QStringLiteral("copy.txt"))), QByteArray("\xff\xfe\x00\x01", 4));
        request.content = QStringLiteral("not base64!");
        QVERIFY(!m_files->write(request).ok());
        request = {.path = QStringLiteral("latin.txt"),
                   .content = QStringLiteral("caf\u00e9"),
                   .encoding = QStringLiteral("latin-1")};
        QVERIFY(m_files->write(request).ok());
        QCOMPARE(contentOf(inside(QStringLiteral("latin.txt"))), QByteArray("caf\xe9"));
        request.encoding = QStringLiteral("klingon");
        QVERIFY(m_files->write(request).error.contains(QLatin1String("unknown encoding")));
    }

    void ifMatchIsACompareAndSwap()
    {
        const auto first = write(QStringLiteral("shared.txt"), QStringLiteral("v1"), QString());
        QVERIFY2(first.ok(), qPrintable(first.error));
        const auto exists = write(QStringLiteral("shared.txt"), QStringLiteral("v1b"), QString());
        QVERIFY(!exists.ok());
        QVERIFY2(exists.error.contains(QLatin1String("if_match mismatch")),
                 qPrintable(exists.error));
        const QString v1 = first.value->sha256;
        const auto second = write(QStringLiteral("shared.txt"), QStringLiteral("v2"), v1);
        QVERIFY2(second.ok(), qPrintable(second.error));
        const auto stale = write(QStringLiteral("shared.txt"), QStringLiteral("v3"), v1);
        QVERIFY(!stale.ok());
        QVERIFY2(stale.error.contains(second.value->sha256), qPrintable(stale.error));
        QCOMPARE(contentOf(inside(QStringLiteral("shared.txt"))), QByteArray("v2"));
        QVERIFY(!write(QStringLiteral("absent.txt"), QStringLiteral("x"), v1).ok());
    }

    void newFilesGoToTheSandboxGroup()
    {
        if (::geteuid() != 0)
            QSKIP("only root can give files to another group");
        QVERIFY(write(QStringLiteral("made/by/tool.txt"), QStringLiteral("x")).ok());
        struct stat file
        {
        }, directory{};
        QCOMPARE(::stat(QFile::encodeName(inside(QStringLiteral("made/by/tool.txt"))).constData(),
                        &file),
                 0);
        QCOMPARE(::stat(QFile::encodeName(inside(QStringLiteral("made/by"))).constData(),
                        &directory),
                 0);
        QCOMPARE(file.st_gid, sandboxGid);
        QCOMPARE(file.st_mode & 07777, mode_t(0664));
        QCOMPARE(directory.st_gid, sandboxGid);
        QCOMPARE(directory.st_mode & 07777, mode_t(02775));
        // A replaced file keeps what its owner chose.
        QVERIFY(::chown(QFile::encodeName(inside(QStringLiteral("made/by/tool.txt"))).constData(),
                        1234, 5678)
                == 0);
        QVERIFY(::chmod(QFile::encodeName(inside(QStringLiteral("made/by/tool.txt"))).constData(),
                        0640)
                == 0);
        QVERIFY(write(QStringLiteral("made/by/tool.txt"), QStringLiteral("y")).ok());
        QCOMPARE(::stat(QFile::encodeName(inside(QStringLiteral("made/by/tool.txt"))).constData(),
                        &file),
                 0);
        QCOMPARE(file.st_uid, uid_t(1234));
        QCOMPARE(file.st_gid, gid_t(5678));
        QCOMPARE(file.st_mode & 07777, mode_t(0640));
    }

    // A recursive listing holds one directory open at a time, not one per directory waiting its
    // turn: a job's tree of many directories must not take the descriptors every client needs.
    // Here the process may open 64 descriptors and the tree has 300 directories.
    void aWideTreeIsListedWithFewDescriptors()
    {
        for (int i = 0; i < 300; ++i)
            QVERIFY(QDir().mkpath(inside(QStringLiteral("wide/d%1/inner").arg(i))));
        rlimit saved{};
        QCOMPARE(::getrlimit(RLIMIT_NOFILE, &saved), 0);
        rlimit few = saved;
        few.rlim_cur = 64;
        QCOMPARE(::setrlimit(RLIMIT_NOFILE, &few), 0);
        const auto restore = qScopeGuard([&saved] { ::setrlimit(RLIMIT_NOFILE, &saved); });
        FileOptions options;
        options.listMaxEntries = 100000;
        makeManager(options);
        const auto all = m_files->list({QStringLiteral("wide"), QString(), true});
        QVERIFY2(all.ok(), qPrintable(all.error));
        QVERIFY(!all.value->truncated);
        QCOMPARE(all.value->entries.size(), 600);
    }

    // Nothing deeper than the walk's depth bound is entered, and the listing says it is
    // incomplete.
    void aDeepChainIsListedDownToTheDepthBound()
    {
        QString chain = QStringLiteral("deep");
        for (int level = 0; level < 300; ++level)
            chain += QStringLiteral("/d");
        QVERIFY(QDir().mkpath(inside(chain)));
        FileOptions options;
        options.listMaxEntries = 100000;
        makeManager(options);
        const auto all = m_files->list({QStringLiteral("deep"), QString(), true});
        QVERIFY2(all.ok(), qPrintable(all.error));
        QVERIFY(all.value->truncated);
        QCOMPARE(all.value->entries.size(), 257);
    }

    void listShowsLinksWithoutFollowing()
    {
        put(inside(QStringLiteral("a.txt")), "12345");
        put(inside(QStringLiteral("sub/b.py")), "print()");
        symlink(m_outside, inside(QStringLiteral("out")));
        const auto top = m_files->list({});
        QVERIFY2(top.ok(), qPrintable(top.error));
        QCOMPARE(top.value->entries.size(), 3);
        QCOMPARE(top.value->entries[0].name, QStringLiteral("a.txt"));
        QCOMPARE(top.value->entries[0].size, qint64(5));
        QVERIFY(top.value->entries[1].isSymlink);
        QVERIFY(!top.value->entries[1].size);
        QVERIFY(top.value->entries[2].isDirectory);

        const auto all = m_files->list({QStringLiteral("/"), QString(), true});
        QStringList paths;
        for (const FileListEntry &entry : all.value->entries)
            paths << entry.path;
        QCOMPARE(paths, (QStringList{"a.txt", "out", "sub", "sub/b.py"}));
        const auto python = m_files->list({QStringLiteral("/"), QStringLiteral("*.py"), true});
        QCOMPARE(python.value->entries.size(), 1);
        QCOMPARE(python.value->entries[0].path, QStringLiteral("sub/b.py"));

        FileOptions options;
        options.listMaxEntries = 2;
        makeManager(options);
        const auto bounded = m_files->list({QStringLiteral("/"), QString(), true});
        QCOMPARE(bounded.value->entries.size(), 2);
        QVERIFY(bounded.value->truncated);
    }

    void deleteRemovesNamesNotTargets()
    {
        put(inside(QStringLiteral("gone.txt")), "x");
        put(inside(QStringLiteral("full/keep.txt")), "x");
        symlink(m_outside + QStringLiteral("/secret.txt"), inside(QStringLiteral("link.txt")));
        QVERIFY(m_files->remove(QStringLiteral("gone.txt")).ok());
        QVERIFY(!QFile::exists(inside(QStringLiteral("gone.txt"))));
        QVERIFY(m_files->remove(QStringLiteral("link.txt")).ok());
        QCOMPARE(contentOf(m_outside + QStringLiteral("/secret.txt")), QByteArray("SECRET"));
        const auto full = m_files->remove(QStringLiteral("full"));
        QVERIFY(!full.ok());
        QVERIFY2(full.error.contains(QLatin1String("not empty")), qPrintable(full.error));
        QVERIFY(!m_files->remove(QStringLiteral("/")).ok());
        QVERIFY(m_files->remove(QStringLiteral("missing.txt"))
                        .error.contains(QLatin1String("no such file")));
    }

    void moveRefusesSilentOverwrite()
    {
        put(inside(QStringLiteral("a.txt")), "A");
        put(inside(QStringLiteral("b.txt")), "B");
        const auto refused = m_files->move({QStringLiteral("a.txt"), QStringLiteral("b.txt")});
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error.contains(QLatin1String("overwrite")), qPrintable(refused.error));
        QCOMPARE(contentOf(inside(QStringLiteral("b.txt"))), QByteArray("B"));
        QVERIFY(m_files->move({QStringLiteral("a.txt"), QStringLiteral("b.txt"), true}).ok());
        QCOMPARE(contentOf(inside(QStringLiteral("b.txt"))), QByteArray("A"));
        const auto moved =
                m_files->move({QStringLiteral("b.txt"), QStringLiteral("new/dir/c.txt")});
        QVERIFY2(moved.ok(), qPrintable(moved.error));
        QCOMPARE(moved.value->destination, QStringLiteral("new/dir/c.txt"));
        QVERIFY(!m_files->move({QStringLiteral("new"), QStringLiteral("new/dir/inner")}).ok());
        QVERIFY(!m_files->move({QStringLiteral("new"), QStringLiteral("../escaped")}).ok());
    }

    // Another process swaps a directory for a symbolic link to the outside while reads and
    // writes run in a loop: each operation must either stay inside or fail.
    void directorySwappedForSymlinkDuringOperations()
    {
        put(inside(QStringLiteral("d/secret.txt")), "inside");
        const QByteArray dir = QFile::encodeName(inside(QStringLiteral("d")));
        const QByteArray link = QFile::encodeName(inside(QStringLiteral("link")));
        QVERIFY(::symlink(QFile::encodeName(m_outside).constData(), link.constData()) == 0);
        std::atomic<bool> stop = false;
        // RENAME_EXCHANGE: "d" is the real directory or the link to the outside, never missing.
        std::thread swapper([&] {
            while (!stop)
                ::renameat2(AT_FDCWD, dir.constData(), AT_FDCWD, link.constData(), RENAME_EXCHANGE);
        });
        int leaked = 0;
        int succeeded = 0;
        for (int i = 0; i < 3000; ++i) {
            const auto read = this->read(QStringLiteral("d/secret.txt"));
            if (read.ok()) {
                ++succeeded;
                leaked += read.value->content == QLatin1String("SECRET");
            }
            write(QStringLiteral("d/planted.txt"), QStringLiteral("x"));
            m_files->move({QStringLiteral("d/secret.txt"), QStringLiteral("d/moved.txt")});
            m_files->move({QStringLiteral("d/moved.txt"), QStringLiteral("d/secret.txt")});
        }
        stop = true;
        swapper.join();
        QCOMPARE(leaked, 0);
        QCOMPARE(contentOf(m_outside + QStringLiteral("/secret.txt")), QByteArray("SECRET"));
        QVERIFY(!QFile::exists(m_outside + QStringLiteral("/planted.txt")));
        QVERIFY(!QFile::exists(m_outside + QStringLiteral("/moved.txt")));
        QVERIFY(QFile::exists(m_outside + QStringLiteral("/secret.txt")));
        qInfo("%d of 3000 reads succeeded inside while the swap ran", succeeded);
    }

private:
    static quint64 qrand64()
    {
        static quint64 counter = 0;
        return ++counter;
    }
};

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    TestFileManager withOpenat2(ContainedRoot::Resolver::Openat2);
    TestFileManager withWalk(ContainedRoot::Resolver::ComponentWalk);
    int failures = QTest::qExec(&withOpenat2, argc, argv);
    qInfo("again, with the per-component walk that replaces openat2 on older kernels");
    failures += QTest::qExec(&withWalk, argc, argv);
    return failures;
}

#include "tst_filemanager.moc"
