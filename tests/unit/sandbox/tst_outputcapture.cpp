// OutputCapture: the cap, head and tail, and the spill file that holds every byte.

#include "sandbox/OutputCapture.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace cmcp;

namespace {

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Distinct bytes everywhere, so a misplaced slice cannot compare equal by accident.
QByteArray numberedLines(int count)
{
    QByteArray text;
    for (int i = 1; i <= count; ++i)
        text += QByteArray::number(i) + '\n';
    return text;
}

} // namespace

class TestOutputCapture : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void outputWithinTheCapIsKeptWholeWithoutSpilling()
    {
        const QString spill = m_dir.filePath(QStringLiteral("small.stdout"));
        OutputCapture capture(100, spill);
        capture.append("hello ");
        capture.append(QByteArray(94, 'x')); // exactly the cap
        capture.finish();
        QCOMPARE(capture.totalBytes(), 100);
        QVERIFY(!capture.truncated());
        QCOMPARE(capture.head(), "hello " + QByteArray(94, 'x'));
        QCOMPARE(capture.tail(), QByteArray());
        QCOMPARE(capture.spillPath(), QString());
        QVERIFY(!QFile::exists(spill));
    }

    void overflowKeepsHeadAndTailAndSpillsEverything_data()
    {
        QTest::addColumn<int>("chunkSize"); // 0: everything in one chunk
        // One byte at a time, chunks around the cap, and one chunk holding everything.
        QTest::newRow("1") << 1;
        QTest::newRow("7") << 7;
        QTest::newRow("1000") << 1000;
        QTest::newRow("1024") << 1024;
        QTest::newRow("all") << 0;
    }

    void overflowKeepsHeadAndTailAndSpillsEverything()
    {
        QFETCH(int, chunkSize);
        const QByteArray output = numberedLines(5000); // 23,893 bytes
        const qint64 cap = 1024;
        const QString spill =
                m_dir.filePath(QStringLiteral("overflow-%1.stdout").arg(QTest::currentDataTag()));
        OutputCapture capture(cap, spill);
        const qsizetype step = chunkSize == 0 ? output.size() : chunkSize;
        for (qsizetype at = 0; at < output.size(); at += step)
            capture.append(output.mid(at, step));
        capture.finish();

        QCOMPARE(capture.totalBytes(), output.size());
        QVERIFY(capture.truncated());
        QCOMPARE(capture.head(), output.left(cap / 2));
        QCOMPARE(capture.tail(), output.right(cap / 2));
        QCOMPARE(capture.spillPath(), spill);
        QCOMPARE(capture.spillError(), QString());
        QCOMPARE(readFile(spill), output);
        struct stat info
        {
        };
        QCOMPARE(::stat(QFile::encodeName(spill).constData(), &info), 0);
        QCOMPARE(info.st_mode & 07777, mode_t(0600));
    }

    void oddCapSplitsIntoHeadAndLongerTail()
    {
        OutputCapture capture(5, QString());
        capture.append("abcdefghij");
        QCOMPARE(capture.head(), QByteArray("ab"));
        QCOMPARE(capture.tail(), QByteArray("hij"));
        QCOMPARE(capture.spillPath(), QString()); // no spill directory: nothing on disk
    }

    void existingSpillFileIsNeverOverwritten()
    {
        const QString spill = m_dir.filePath(QStringLiteral("taken.stdout"));
        {
            QFile planted(spill);
            QVERIFY(planted.open(QIODevice::WriteOnly));
            planted.write("planted");
        }
        OutputCapture capture(4, spill);
        capture.append("0123456789");
        capture.finish();
        QVERIFY(capture.truncated());
        QCOMPARE(capture.spillPath(), QString());
        QVERIFY2(capture.spillError().contains(spill), qPrintable(capture.spillError()));
        QCOMPARE(readFile(spill), QByteArray("planted"));
        QCOMPARE(capture.head(), QByteArray("01"));
        QCOMPARE(capture.tail(), QByteArray("89"));
    }

    void symlinkInPlaceOfTheSpillFileIsNotFollowed()
    {
        const QString target = m_dir.filePath(QStringLiteral("victim"));
        const QString spill = m_dir.filePath(QStringLiteral("link.stdout"));
        QVERIFY(QFile::link(target, spill));
        OutputCapture capture(4, spill);
        capture.append("0123456789");
        capture.finish();
        QCOMPARE(capture.spillPath(), QString());
        QVERIFY(!capture.spillError().isEmpty());
        QVERIFY(!QFile::exists(target));
    }

    void spillFileThatCannotBeCreatedIsReported()
    {
        QTemporaryDir gone;
        QVERIFY(gone.isValid());
        const QString spill = gone.filePath(QStringLiteral("x.stdout"));
        QVERIFY(gone.remove());
        OutputCapture capture(4, spill);
        capture.append("0123456789");
        capture.finish();
        QCOMPARE(capture.spillPath(), QString());
        QVERIFY2(capture.spillError().startsWith(QStringLiteral("cannot create ") + spill),
                 qPrintable(capture.spillError()));
        QCOMPARE(capture.totalBytes(), 10);
        QCOMPARE(capture.tail(), QByteArray("89"));
    }

    void appendsAfterFinishAreIgnored()
    {
        OutputCapture capture(10, QString());
        capture.append("abc");
        capture.finish();
        capture.append("def");
        QCOMPARE(capture.totalBytes(), 3);
        QCOMPARE(capture.head(), QByteArray("abc"));
    }

    void largeOutputKeepsOnlyTheCapAndSpillsTheRest()
    {
        const QString spill = m_dir.filePath(QStringLiteral("large.stdout"));
        OutputCapture capture(64 * 1024, spill);
        const QByteArray chunk(16 * 1024, 'z');
        for (int i = 0; i < 4096; ++i)
            capture.append(chunk);
        capture.finish();
        QCOMPARE(capture.totalBytes(), qint64(64) * 1024 * 1024);
        QCOMPARE(capture.head().size(), 32 * 1024);
        QCOMPARE(capture.tail().size(), 32 * 1024);
        QCOMPARE(QFileInfo(spill).size(), qint64(64) * 1024 * 1024);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestOutputCapture)
#include "tst_outputcapture.moc"
