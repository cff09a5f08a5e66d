// OutputHandleStore: a handle reads its output only in the session that received it, windows
// by offset, expiry (the message says so, the file is deleted), and the session's end.

#include "jobs/OutputHandleStore.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace cmcp;

class TestOutputHandleStore : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_serial = 0;

    QString spillFile(const QByteArray &content)
    {
        const QString path = m_dir.filePath(QStringLiteral("spill%1").arg(++m_serial));
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size())
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void readsWindowsInTheOwningSessionOnly()
    {
        OutputHandleStore store(60);
        const QByteArray content = "0123456789";
        const QString path = spillFile(content);
        const QString handle = store.add(QStringLiteral("A"), path, content.size());
        QVERIFY(handle.startsWith(QStringLiteral("out_")));
        QCOMPARE(handle.size(), 4 + 32);
        QString error;
        std::optional<OutputWindow> window = store.read(QStringLiteral("A"), handle, 2, 5, &error);
        QVERIFY2(window, qPrintable(error));
        QCOMPARE(window->bytes, QByteArray("23456"));
        QCOMPARE(window->nextOffset, 7);
        QCOMPARE(window->totalBytes, 10);
        window = store.read(QStringLiteral("A"), handle, 7, 100, &error);
        QCOMPARE(window->bytes, QByteArray("789"));

        // Another session, a guessed handle, a bad offset.
        QVERIFY(!store.read(QStringLiteral("B"), handle, 0, 5, &error));
        QVERIFY(error.startsWith(QStringLiteral("no such output handle")));
        QVERIFY(!store.read(QStringLiteral("A"), QStringLiteral("out_") + QString(32, u'0'), 0, 5,
                            &error));
        QVERIFY(error.startsWith(QStringLiteral("no such output handle")));
        QVERIFY(!store.read(QStringLiteral("A"), handle, 11, 5, &error));
        QVERIFY(error.contains(QStringLiteral("beyond")));
    }

    void expiredHandleSaysSoAndItsFileIsGone()
    {
        OutputHandleStore store(1);
        const QString path = spillFile("expiring");
        const QString handle = store.add(QStringLiteral("A"), path, 8);
        QString error;
        QVERIFY(store.read(QStringLiteral("A"), handle, 0, 8, &error));
        QTRY_VERIFY_WITH_TIMEOUT(!QFile::exists(path), 5000);
        QCOMPARE(store.size(), 0);
        QVERIFY(!store.read(QStringLiteral("A"), handle, 0, 8, &error));
        QVERIFY2(error.contains(QStringLiteral("has expired")), qPrintable(error));
        // To another session, an expired handle is no more known than any other.
        QVERIFY(!store.read(QStringLiteral("B"), handle, 0, 8, &error));
        QVERIFY(error.startsWith(QStringLiteral("no such output handle")));
    }

    void sessionEndDeletesItsFilesOnly()
    {
        OutputHandleStore store(60);
        const QString mine = spillFile("mine");
        const QString theirs = spillFile("theirs");
        store.add(QStringLiteral("A"), mine, 4);
        const QString kept = store.add(QStringLiteral("B"), theirs, 6);
        store.endSession(QStringLiteral("A"));
        QVERIFY(!QFile::exists(mine));
        QVERIFY(QFile::exists(theirs));
        QString error;
        QVERIFY(store.read(QStringLiteral("B"), kept, 0, 6, &error));
    }

    void storeDeletesItsFilesWhenItGoes()
    {
        const QString path = spillFile("left");
        {
            OutputHandleStore store(60);
            store.add(QStringLiteral("A"), path, 4);
        }
        QVERIFY(!QFile::exists(path));
    }
};

QTEST_GUILESS_MAIN(TestOutputHandleStore)
#include "tst_outputhandlestore.moc"
