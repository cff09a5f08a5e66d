// WorkspacePath: the textual checks in front of the kernel's containment, with a message that
// names each problem.

#include "workspace/WorkspacePath.h"

#include <QTest>

using namespace cmcp;

class TestWorkspacePath : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void normalises_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("display");
        QTest::newRow("plain") << "a/b.txt"
                               << "a/b.txt";
        QTest::newRow("leading slash is the root") << "/a/b.txt"
                                                   << "a/b.txt";
        QTest::newRow("dots and doubled slashes") << "./a//./b.txt/"
                                                  << "a/b.txt";
        QTest::newRow("dot-dot inside") << "a/../b.txt"
                                        << "b.txt";
        QTest::newRow("empty is the root") << ""
                                           << "/";
        QTest::newRow("slash is the root") << "/"
                                           << "/";
        QTest::newRow("backslashes are name characters") << "..\\..\\etc"
                                                         << "..\\..\\etc";
        QTest::newRow("percent forms stay literal") << "%2e%2e/%2e%2e/etc"
                                                    << "%2e%2e/%2e%2e/etc";
    }
    void normalises()
    {
        QFETCH(QString, text);
        QFETCH(QString, display);
        QString error;
        const std::optional<WorkspacePath> path = WorkspacePath::parse(text, &error);
        QVERIFY2(path, qPrintable(error));
        QCOMPARE(path->display(), display);
    }

    void refuses_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("problem");
        QTest::newRow("dot-dot") << "../etc/passwd"
                                 << "escapes the workspace";
        QTest::newRow("dot-dot after a name") << "a/../../etc"
                                              << "escapes the workspace";
        QTest::newRow("absolute dot-dot") << "/../etc"
                                          << "escapes the workspace";
        QTest::newRow("NUL") << QStringLiteral("a.txt") + QChar(0) + QStringLiteral(".py") << "NUL";
        QTest::newRow("unpaired surrogate")
                << QString(QChar(0xD800)) + QStringLiteral(".txt") << "not valid Unicode";
        QTest::newRow("replacement character")
                << QString(QChar::ReplacementCharacter) + QStringLiteral(".txt")
                << "not valid Unicode";
        QTest::newRow("long path") << QStringLiteral("a/").repeated(2100) + QStringLiteral("b.txt")
                                   << "path is too long";
        QTest::newRow("long name") << QString(300, QLatin1Char('x')) + QStringLiteral(".txt")
                                   << "is too long: 304 bytes";
        // 100 three-byte characters: 300 bytes, though only 100 characters.
        QTest::newRow("long name in bytes")
                << QString(100, QChar(0x20AC)) << "is too long: 300 bytes";
    }
    void refuses()
    {
        QFETCH(QString, text);
        QFETCH(QString, problem);
        QString error;
        QVERIFY(!WorkspacePath::parse(text, &error));
        QVERIFY2(error.contains(problem), qPrintable(error));
    }

    void relationsAndBytes()
    {
        QString error;
        const WorkspacePath dir = *WorkspacePath::parse(QStringLiteral("a/b"), &error);
        const WorkspacePath file = *WorkspacePath::parse(QStringLiteral("a/b/c.txt"), &error);
        const WorkspacePath sibling = *WorkspacePath::parse(QStringLiteral("a/bc"), &error);
        QVERIFY(file.isWithin(dir));
        QVERIFY(!sibling.isWithin(dir));
        QCOMPARE(file.parent(), dir);
        QCOMPARE(file.name(), QStringLiteral("c.txt"));
        QCOMPARE(WorkspacePath().relativeBytes(), QByteArray("."));
        QCOMPARE(file.relativeBytes(), QByteArray("a/b/c.txt"));
    }
};

QTEST_GUILESS_MAIN(TestWorkspacePath)
#include "tst_workspacepath.moc"
