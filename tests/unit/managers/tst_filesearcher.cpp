// file_search: literal and regular-expression matching, its limits and the `truncated` report,
// what it skips (binary files, files over FILE_MAX_SIZE_MB, disallowed extensions) and that it
// follows no symbolic link, to the outside or inside.

#include "workspace/ContainedRoot.h"
#include "managers/FileManager.h"
#include "managers/FileSearcher.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace cmcp;

class TestFileSearcher : public QObject
{
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_scratch;
    QString m_workspace;
    QString m_outside;
    std::unique_ptr<FileManager> m_files;

    void put(const QString &relative, const QByteArray &data)
    {
        const QString path = m_workspace + QLatin1Char('/') + relative;
        QDir().mkpath(QFileInfo(path).path());
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(data);
    }
    void link(const QString &target, const QString &relative)
    {
        const QString path = m_workspace + QLatin1Char('/') + relative;
        QVERIFY2(::symlink(QFile::encodeName(target).constData(),
                           QFile::encodeName(path).constData())
                         == 0,
                 qPrintable(path));
    }
    FileOutcome<FileSearchResult> search(const QString &pattern, FileSearchRequest request = {},
                                         const FileSearchLimits &limits = {})
    {
        request.pattern = pattern;
        return searchFiles(*m_files, request, limits);
    }
    static QStringList places(const FileSearchResult &result)
    {
        QStringList found;
        for (const FileSearchMatch &match : result.matches)
            found << QStringLiteral("%1:%2:%3").arg(match.path).arg(match.line).arg(match.column);
        return found;
    }

private Q_SLOTS:
    void init()
    {
        m_scratch = std::make_unique<QTemporaryDir>();
        QVERIFY(m_scratch->isValid());
        m_workspace = m_scratch->path() + QStringLiteral("/workspace");
        m_outside = m_scratch->path() + QStringLiteral("/outside");
        QVERIFY(QDir().mkpath(m_workspace));
        QVERIFY(QDir().mkpath(m_outside));
        QFile secret(m_outside + QStringLiteral("/secret.txt"));
        QVERIFY(secret.open(QIODevice::WriteOnly));
        secret.write("needle outside\n");
        QString error;
        auto root = ContainedRoot::open(m_workspace, ContainedRoot::Resolver::Openat2, &error);
        QVERIFY2(root, qPrintable(error));
        FileOptions options;
        options.maxBytes = 64 * 1024;
        m_files = std::make_unique<FileManager>(Workspace(m_workspace, 0), root, options);
    }

    void literalIsTheDefault()
    {
        put(QStringLiteral("a.py"), "def f(x):\n    return f(x) + 1\n");
        put(QStringLiteral("sub/b.md"), "no\nsee f(x) here\r\n");
        const auto found = search(QStringLiteral("f(x)"));
        QVERIFY2(found.ok(), qPrintable(found.error));
        QCOMPARE(places(*found.value),
                 QStringList({QStringLiteral("a.py:1:5"), QStringLiteral("a.py:2:12"),
                              QStringLiteral("sub/b.md:2:5")}));
        QCOMPARE(found.value->matches[2].text, QStringLiteral("see f(x) here"));
        QCOMPARE(found.value->filesScanned, qint64(2));
        QVERIFY(!found.value->truncated);
    }

    void regexIgnoreCaseGlobAndPath()
    {
        put(QStringLiteral("a.py"), "def alpha():\nDEF beta():\n");
        put(QStringLiteral("b.txt"), "def gamma():\n");
        put(QStringLiteral("sub/c.py"), "def delta():\n");
        FileSearchRequest request;
        request.regex = true;
        request.ignoreCase = true;
        request.glob = QStringLiteral("*.py");
        const auto found = search(QStringLiteral("^def \\w+"), request);
        QVERIFY2(found.ok(), qPrintable(found.error));
        QCOMPARE(places(*found.value),
                 QStringList({QStringLiteral("a.py:1:1"), QStringLiteral("a.py:2:1"),
                              QStringLiteral("sub/c.py:1:1")}));
        request.path = QStringLiteral("/sub");
        QCOMPARE(places(*search(QStringLiteral("^def \\w+"), request).value),
                 QStringList{QStringLiteral("sub/c.py:1:1")});
        request.path = QStringLiteral("b.txt");
        request.glob.clear();
        QCOMPARE(places(*search(QStringLiteral("gamma"), request).value),
                 QStringList{QStringLiteral("b.txt:1:5")});
    }

    void badPatternsAreClearErrors()
    {
        FileSearchRequest request;
        request.regex = true;
        const auto bad = search(QStringLiteral("foo(bar"), request);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error.startsWith(QLatin1String("pattern is not a valid regular expression:"))
                         && bad.error.contains(QLatin1String("offset 7")),
                 qPrintable(bad.error));
        // The same text is fine as a literal.
        QVERIFY(search(QStringLiteral("foo(bar")).ok());
        QVERIFY(search(QString()).error.contains(QLatin1String("empty")));
        request.regex = false;
        request.glob = QStringLiteral("src/*.py");
        QVERIFY(search(QStringLiteral("x"), request).error.contains(QLatin1String("file names")));
        request.glob.clear();
        request.path = QStringLiteral("../outside");
        QVERIFY(!search(QStringLiteral("needle"), request).ok());
    }

    void resultsAndFilesAreCapped()
    {
        QByteArray many;
        for (int i = 0; i < 50; ++i)
            many += "hit\n";
        put(QStringLiteral("many.txt"), many);
        FileSearchRequest request;
        request.maxResults = 7;
        const auto capped = search(QStringLiteral("hit"), request);
        QVERIFY2(capped.ok(), qPrintable(capped.error));
        QCOMPARE(capped.value->matches.size(), 7);
        QVERIFY(capped.value->truncated);
        QCOMPARE(capped.value->truncatedBy, QStringLiteral("max_results"));

        // Exactly max_results matches is not truncated.
        request.maxResults = 50;
        QVERIFY(!search(QStringLiteral("hit"), request).value->truncated);

        for (int i = 0; i < 5; ++i)
            put(QStringLiteral("f%1.txt").arg(i), "hit\n");
        FileSearchLimits limits;
        limits.maxFiles = 3;
        const auto files = search(QStringLiteral("hit"), {}, limits);
        QCOMPARE(files.value->filesScanned, qint64(3));
        QVERIFY(files.value->truncated);
        QCOMPARE(files.value->truncatedBy, QStringLiteral("max_files"));

        limits = {};
        limits.timeLimit = std::chrono::milliseconds(0);
        QCOMPARE(search(QStringLiteral("hit"), {}, limits).value->truncatedBy,
                 QStringLiteral("time"));
    }

    void binaryLargeAndDisallowedFilesAreSkipped()
    {
        put(QStringLiteral("blob.txt"), QByteArray("needle\0binary", 13));
        put(QStringLiteral("big.txt"), QByteArray(70 * 1024, 'x') + "needle\n");
        put(QStringLiteral("script.sh"), "needle\n");
        put(QStringLiteral("ok.txt"), "needle\n");
        const auto found = search(QStringLiteral("needle"));
        QVERIFY2(found.ok(), qPrintable(found.error));
        QCOMPARE(places(*found.value), QStringList{QStringLiteral("ok.txt:1:1")});
        QCOMPARE(found.value->skippedBinary, qint64(1));
        QCOMPARE(found.value->skippedLarge, qint64(1));
        QCOMPARE(found.value->filesScanned, qint64(2));
    }

    void symbolicLinksAreNotFollowed()
    {
        put(QStringLiteral("real/inner.txt"), "needle inside\n");
        link(m_outside + QStringLiteral("/secret.txt"), QStringLiteral("to-secret.txt"));
        link(m_outside, QStringLiteral("to-outside"));
        link(QStringLiteral("real"), QStringLiteral("to-real"));
        link(QStringLiteral("real/inner.txt"), QStringLiteral("to-inner.txt"));
        const auto found = search(QStringLiteral("needle"));
        QVERIFY2(found.ok(), qPrintable(found.error));
        QCOMPARE(places(*found.value), QStringList{QStringLiteral("real/inner.txt:1:1")});
        FileSearchRequest request;
        request.path = QStringLiteral("to-outside");
        QVERIFY(!search(QStringLiteral("needle"), request).ok());
        request.path = QStringLiteral("to-secret.txt");
        QVERIFY(!search(QStringLiteral("needle"), request).ok());
    }

    void fifoIsRefusedWithoutBlocking()
    {
        const QByteArray fifo = QFile::encodeName(m_workspace + QStringLiteral("/pipe.txt"));
        QCOMPARE(::mkfifo(fifo.constData(), 0600), 0);
        put(QStringLiteral("ok.txt"), "needle\n");
        QCOMPARE(places(*search(QStringLiteral("needle")).value),
                 QStringList{QStringLiteral("ok.txt:1:1")});
        FileSearchRequest request;
        request.path = QStringLiteral("pipe.txt");
        const auto refused = search(QStringLiteral("needle"), request);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error.contains(QLatin1String("FIFO")), qPrintable(refused.error));
    }

    void longLinesAreCutAroundTheMatch()
    {
        put(QStringLiteral("long.txt"), QByteArray(1000, 'a') + "needle" + QByteArray(1000, 'b'));
        const auto found = search(QStringLiteral("needle"));
        QVERIFY2(found.ok(), qPrintable(found.error));
        const QString text = found.value->matches.value(0).text;
        QCOMPARE(found.value->matches.value(0).column, qint64(1001));
        QVERIFY2(text.contains(QLatin1String("needle")), qPrintable(text));
        QCOMPARE(text.size(), 202); // 200 characters and an ellipsis at each cut end
        QVERIFY(text.startsWith(QChar(0x2026)) && text.endsWith(QChar(0x2026)));
    }

    // (a+)+$ against a long run of a's that ends otherwise backtracks exponentially; the subject
    // bound and PCRE2's match limit make each line cost bounded time.
    void catastrophicPatternEndsInBoundedTime()
    {
        QByteArray lines;
        for (int i = 0; i < 20; ++i)
            lines += QByteArray(3000, 'a') + "!\n";
        put(QStringLiteral("evil.txt"), lines);
        FileSearchRequest request;
        request.regex = true;
        QElapsedTimer timer;
        timer.start();
        const auto found = search(QStringLiteral("(a+)+$"), request);
        QVERIFY2(found.ok(), qPrintable(found.error));
        QVERIFY2(timer.elapsed() < 15000, qPrintable(QString::number(timer.elapsed())));
        qInfo("(a+)+$ over 20 lines of 3000 a's: %lld ms, %lld matches, truncated by '%s'",
              timer.elapsed(), qlonglong(found.value->matches.size()),
              qPrintable(found.value->truncatedBy));
    }
};

QTEST_GUILESS_MAIN(TestFileSearcher)
#include "tst_filesearcher.moc"
