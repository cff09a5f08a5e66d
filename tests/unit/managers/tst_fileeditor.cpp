// file_edit: how old_text is found (exactly, then line by line ignoring line endings and
// trailing whitespace), what is refused (ambiguous, missing, empty), what the file keeps (its
// line endings, its bytes on a dry run or a failed edit), and the unified diff it returns.

#include "workspace/ContainedRoot.h"
#include "managers/FileEditor.h"
#include "managers/FileManager.h"
#include "managers/TextEdits.h"
#include "managers/UnifiedDiff.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace cmcp;

class TestFileEditor : public QObject
{
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_scratch;
    std::unique_ptr<FileManager> m_files;

    QString inside(const QString &relative) const
    {
        return m_scratch->path() + QLatin1Char('/') + relative;
    }
    QByteArray contentOf(const QString &relative) const
    {
        QFile file(inside(relative));
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<missing>");
    }
    void put(const QString &relative, const QByteArray &data)
    {
        QFile file(inside(relative));
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(data);
    }
    FileOutcome<FileEditResult> edit(const QString &path, const QList<TextEdit> &edits,
                                     bool dryRun = false)
    {
        FileEditRequest request;
        request.path = path;
        request.edits = edits;
        request.dryRun = dryRun;
        return editFile(*m_files, request);
    }

private Q_SLOTS:
    void init()
    {
        m_scratch = std::make_unique<QTemporaryDir>();
        QVERIFY(m_scratch->isValid());
        QString error;
        auto root =
                ContainedRoot::open(m_scratch->path(), ContainedRoot::Resolver::Openat2, &error);
        QVERIFY2(root, qPrintable(error));
        FileOptions options;
        options.maxBytes = 4096;
        m_files = std::make_unique<FileManager>(Workspace(m_scratch->path(), 0), root, options);
    }

    void exactMatchIsReplaced()
    {
        const TextEditsOutcome out =
                applyTextEdits(QStringLiteral("alpha beta\ngamma\n"),
                               {{QStringLiteral("beta"), QStringLiteral("B")}});
        QVERIFY2(out.text, qPrintable(out.error));
        QCOMPARE(*out.text, QStringLiteral("alpha B\ngamma\n"));
        QCOMPARE(out.applied.size(), 1);
        QCOMPARE(out.applied[0].line, qsizetype(1));
        QVERIFY(out.applied[0].exact);
    }

    void lfOldTextMatchesCrlfFileWhichStaysCrlf()
    {
        const TextEditsOutcome out =
                applyTextEdits(QStringLiteral("one\r\ntwo\r\nthree\r\n"),
                               {{QStringLiteral("two\nthree\n"), QStringLiteral("2\n3\n3b\n")}});
        QVERIFY2(out.text, qPrintable(out.error));
        QCOMPARE(*out.text, QStringLiteral("one\r\n2\r\n3\r\n3b\r\n"));
        QCOMPARE(out.applied[0].line, qsizetype(2));
        QVERIFY(!out.applied[0].exact);
    }

    void crlfNewTextInLfFileBecomesLf()
    {
        const TextEditsOutcome out = applyTextEdits(
                QStringLiteral("a\nb\n"), {{QStringLiteral("b"), QStringLiteral("b\r\nc")}});
        QVERIFY2(out.text, qPrintable(out.error));
        QCOMPARE(*out.text, QStringLiteral("a\nb\nc\n"));
    }

    void trailingWhitespaceIsIgnoredButNotLeading()
    {
        const QString text = QStringLiteral("def f():  \n    return 1\t\nend\n");
        const TextEditsOutcome out = applyTextEdits(text,
                                                    {{QStringLiteral("def f():\n    return 1"),
                                                      QStringLiteral("def g():\n    return 2")}});
        QVERIFY2(out.text, qPrintable(out.error));
        // The matched lines are replaced up to their line break, which stays.
        QCOMPARE(*out.text, QStringLiteral("def g():\n    return 2\nend\n"));
        QVERIFY(!out.applied[0].exact);

        const TextEditsOutcome tabs =
                applyTextEdits(QStringLiteral("\tx = 1 \r\ny = 2\r\n"),
                               {{QStringLiteral("    x = 1\ny = 2"), QStringLiteral("z")}});
        QVERIFY(!tabs.text);
        QVERIFY2(tabs.error.contains(QLatin1String("edits[0]"))
                         && tabs.error.contains(QLatin1String("not found")),
                 qPrintable(tabs.error));
    }

    void oldTextEndingInLineBreakRemovesWholeLines()
    {
        const TextEditsOutcome out = applyTextEdits(QStringLiteral("keep\r\ndrop \r\nkeep too\r\n"),
                                                    {{QStringLiteral("drop\n"), QString()}});
        QVERIFY2(out.text, qPrintable(out.error));
        QCOMPARE(*out.text, QStringLiteral("keep\r\nkeep too\r\n"));
    }

    void ambiguousOldTextIsRefusedNamingTheEdit()
    {
        const TextEditsOutcome exact = applyTextEdits(
                QStringLiteral("x = 1\ny = 2\nx = 1\n"),
                {{QStringLiteral("y"), QStringLiteral("Y")}, {QStringLiteral("x = 1"), QString()}});
        QVERIFY(!exact.text);
        QVERIFY2(exact.error.startsWith(QLatin1String("edits[1]:"))
                         && exact.error.contains(QLatin1String("2 times"))
                         && exact.error.contains(QLatin1String("lines 1 and 3")),
                 qPrintable(exact.error));

        // Unique only while trailing whitespace counts: still ambiguous.
        const TextEditsOutcome loose = applyTextEdits(
                QStringLiteral("a \nb\na\t\nb\n"), {{QStringLiteral("a\nb"), QStringLiteral("c")}});
        QVERIFY(!loose.text);
        QVERIFY2(loose.error.startsWith(QLatin1String("edits[0]:"))
                         && loose.error.contains(QLatin1String("matches 2 places")),
                 qPrintable(loose.error));

        // "aa" occurs twice in "aaa", overlapping: replacing either would be a guess.
        QVERIFY(!applyTextEdits(QStringLiteral("aaa"),
                                {{QStringLiteral("aa"), QStringLiteral("b")}})
                         .text);
    }

    void missingAndEmptyOldTextAreRefused()
    {
        const TextEditsOutcome missing =
                applyTextEdits(QStringLiteral("a\n"),
                               {{QStringLiteral("a"), QStringLiteral("b")},
                                {QStringLiteral("a"), QStringLiteral("c")}});
        QVERIFY(!missing.text);
        // The first edit consumed the only "a": the second no longer finds it.
        QVERIFY2(missing.error.startsWith(QLatin1String("edits[1]:"))
                         && missing.error.contains(QLatin1String("not found")),
                 qPrintable(missing.error));
        const TextEditsOutcome empty =
                applyTextEdits(QStringLiteral("a\n"), {{QString(), QStringLiteral("b")}});
        QVERIFY(!empty.text);
        QVERIFY(empty.error.contains(QLatin1String("empty")));
    }

    void multipleEditsApplyInOrder()
    {
        const TextEditsOutcome out =
                applyTextEdits(QStringLiteral("first\nsecond\nthird\n"),
                               {{QStringLiteral("first"), QStringLiteral("1st")},
                                {QStringLiteral("1st\nsecond"), QStringLiteral("1st\n2nd")},
                                {QStringLiteral("third\n"), QStringLiteral("3rd\nfourth\n")}});
        QVERIFY2(out.text, qPrintable(out.error));
        QCOMPARE(*out.text, QStringLiteral("1st\n2nd\n3rd\nfourth\n"));
        QCOMPARE(out.applied.size(), 3);
        QCOMPARE(out.applied[2].line, qsizetype(3));
    }

    void diffIsUnified()
    {
        QCOMPARE(unifiedDiff(QStringLiteral("a\nb\n"), QStringLiteral("a\nb\n"),
                             QStringLiteral("f.txt")),
                 QString());
        QCOMPARE(unifiedDiff(QStringLiteral("a\nb\nc"), QStringLiteral("a\nB\nc"),
                             QStringLiteral("f.txt")),
                 QStringLiteral("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
                                "\\ No newline at end of file\n"));
        QCOMPARE(unifiedDiff(QString(), QStringLiteral("new\n"), QStringLiteral("f.txt")),
                 QStringLiteral("--- a/f.txt\n+++ b/f.txt\n@@ -0,0 +1,1 @@\n+new\n"));
        // A changed line break is a change, shown without the \r.
        QCOMPARE(unifiedDiff(QStringLiteral("x\r\n"), QStringLiteral("x\n"), QStringLiteral("f")),
                 QStringLiteral("--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n-x\n+x\n"));
    }

    void diffOfDistantChangesHasTwoHunks()
    {
        QStringList lines;
        for (int i = 1; i <= 100; ++i)
            lines << QStringLiteral("line %1").arg(i);
        const QString before = lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
        lines[9] = QStringLiteral("changed 10");
        lines.insert(80, QStringLiteral("inserted"));
        const QString after = lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
        const QString diff = unifiedDiff(before, after, QStringLiteral("f.txt"));
        QCOMPARE(diff.count(QLatin1String("\n@@ ")), 2);
        QVERIFY2(diff.contains(QLatin1String("@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n"
                                             "-line 10\n+changed 10\n line 11\n")),
                 qPrintable(diff));
        QVERIFY2(diff.contains(QLatin1String("@@ -78,6 +78,7 @@\n line 78\n line 79\n line 80\n"
                                             "+inserted\n line 81\n")),
                 qPrintable(diff));
    }

    void editWritesThroughTheFileManager()
    {
        put(QStringLiteral("code.py"), "def f():\r\n    return 1 \r\n");
        const auto edited =
                edit(QStringLiteral("/code.py"),
                     {{QStringLiteral("    return 1\n"), QStringLiteral("    return 2\n")}});
        QVERIFY2(edited.ok(), qPrintable(edited.error));
        QVERIFY(edited.value->written);
        QCOMPARE(edited.value->path, QStringLiteral("code.py"));
        QCOMPARE(contentOf(QStringLiteral("code.py")), QByteArray("def f():\r\n    return 2\r\n"));
        QCOMPARE(edited.value->sha256,
                 FileManager::sha256Hex(contentOf(QStringLiteral("code.py"))));
        QCOMPARE(edited.value->diff,
                 QStringLiteral("--- a/code.py\n+++ b/code.py\n@@ -1,2 +1,2 @@\n def f():\n"
                                "-    return 1 \n+    return 2\n"));
    }

    void dryRunLeavesTheFileUntouched()
    {
        put(QStringLiteral("notes.md"), "keep me\n");
        struct stat before
        {
        };
        QCOMPARE(::stat(QFile::encodeName(inside(QStringLiteral("notes.md"))).constData(), &before),
                 0);
        const auto edited = edit(QStringLiteral("notes.md"),
                                 {{QStringLiteral("keep"), QStringLiteral("changed")}}, true);
        QVERIFY2(edited.ok(), qPrintable(edited.error));
        QVERIFY(!edited.value->written);
        QVERIFY(edited.value->diff.contains(QLatin1String("+changed me")));
        QCOMPARE(edited.value->sha256, FileManager::sha256Hex("changed me\n"));
        QCOMPARE(contentOf(QStringLiteral("notes.md")), QByteArray("keep me\n"));
        struct stat after
        {
        };
        QCOMPARE(::stat(QFile::encodeName(inside(QStringLiteral("notes.md"))).constData(), &after),
                 0);
        QCOMPARE(after.st_ino, before.st_ino);
        QCOMPARE(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    }

    void failedEditsLeaveTheFileUntouched()
    {
        put(QStringLiteral("a.txt"), "x\nx\n");
        const auto ambiguous =
                edit(QStringLiteral("a.txt"), {{QStringLiteral("x"), QStringLiteral("y")}});
        QVERIFY(!ambiguous.ok());
        QVERIFY2(ambiguous.error.startsWith(QLatin1String("a.txt: edits[0]:")),
                 qPrintable(ambiguous.error));
        QCOMPARE(contentOf(QStringLiteral("a.txt")), QByteArray("x\nx\n"));

        FileEditRequest stale;
        stale.path = QStringLiteral("a.txt");
        stale.edits = {{QStringLiteral("x\nx"), QStringLiteral("z")}};
        stale.ifMatch = FileManager::sha256Hex("something else");
        const auto mismatch = editFile(*m_files, stale);
        QVERIFY(!mismatch.ok());
        QVERIFY2(mismatch.error.contains(QLatin1String("if_match mismatch")),
                 qPrintable(mismatch.error));
        stale.ifMatch = FileManager::sha256Hex("x\nx\n").toUpper();
        QVERIFY2(editFile(*m_files, stale).ok(), "a matching if_match (any case) edits");
        QCOMPARE(contentOf(QStringLiteral("a.txt")), QByteArray("z\n"));
        const QStringList left = QDir(m_scratch->path()).entryList(QDir::Files | QDir::Hidden);
        QCOMPARE(left, QStringList{QStringLiteral("a.txt")});
    }

    void sameRulesAsFileWrite()
    {
        put(QStringLiteral("run.sh"), "echo hi\n");
        const auto extension =
                edit(QStringLiteral("run.sh"), {{QStringLiteral("hi"), QStringLiteral("ho")}});
        QVERIFY(!extension.ok());
        QVERIFY2(extension.error.contains(QLatin1String("extension")), qPrintable(extension.error));

        put(QStringLiteral("small.txt"), "x");
        const auto tooLarge = edit(QStringLiteral("small.txt"),
                                   {{QStringLiteral("x"), QString(5000, QLatin1Char('y'))}});
        QVERIFY(!tooLarge.ok());
        QVERIFY2(tooLarge.error.contains(QLatin1String("too large")), qPrintable(tooLarge.error));
        QCOMPARE(contentOf(QStringLiteral("small.txt")), QByteArray("x"));

        put(QStringLiteral("latin.txt"), "caf\xe9\n");
        const auto notUtf8 =
                edit(QStringLiteral("latin.txt"), {{QStringLiteral("caf"), QStringLiteral("t")}});
        QVERIFY(!notUtf8.ok());
        QVERIFY2(notUtf8.error.contains(QLatin1String("UTF-8")), qPrintable(notUtf8.error));

        QVERIFY(!edit(QStringLiteral("../outside.txt"),
                      {{QStringLiteral("a"), QStringLiteral("b")}})
                         .ok());
        QVERIFY(!edit(QStringLiteral("missing.txt"), {{QStringLiteral("a"), QStringLiteral("b")}})
                         .ok());
    }
};

QTEST_GUILESS_MAIN(TestFileEditor)
#include "tst_fileeditor.moc"
