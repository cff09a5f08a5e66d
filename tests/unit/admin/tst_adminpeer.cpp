// One console connection on the daemon side (server/admin/AdminPeer): malformed and oversized
// lines are answered and the connection carries on; a console that does not read cannot make
// the daemon buffer without bound, and learns how many events it missed.

#include "admin/AdminPeer.h"
#include "common/AdminProtocol.h"

#include <QLocalServer>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace cmcp;
using namespace cmcp::admin;

class TestAdminPeer : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QLocalServer m_server;
    std::unique_ptr<QLocalSocket> m_console;
    std::unique_ptr<AdminPeer> m_peer;
    LineSplitter m_splitter;

    // The next message the console receives, or nullopt after 5 s.
    std::optional<Message> nextMessage()
    {
        QList<LineSplitter::Line> lines;
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 5000) {
            if (!m_pendingLines.isEmpty())
                break;
            if (m_console->bytesAvailable() == 0)
                m_console->waitForReadyRead(100);
            QCoreApplication::processEvents();
            m_pendingLines.append(m_splitter.feed(m_console->readAll()));
        }
        if (m_pendingLines.isEmpty())
            return std::nullopt;
        const LineSplitter::Line line = m_pendingLines.takeFirst();
        return decode(line.bytes, nullptr);
    }
    QList<LineSplitter::Line> m_pendingLines;

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY(m_server.listen(m_dir.filePath("admin.sock")));
        m_console = std::make_unique<QLocalSocket>();
        m_console->connectToServer(m_server.fullServerName());
        QVERIFY(m_console->waitForConnected(5000));
        QVERIFY(m_server.waitForNewConnection(5000));
        m_peer = std::make_unique<AdminPeer>(m_server.nextPendingConnection(), "test console");
        m_splitter = LineSplitter();
        m_pendingLines.clear();
        const auto hello = nextMessage();
        QVERIFY(hello);
        QCOMPARE(int(hello->type), int(MessageType::Hello));
        QCOMPARE(hello->version, protocolVersion);
    }
    void cleanup()
    {
        m_peer.reset();
        m_console.reset();
        m_server.close();
    }

    void malformedLinesAreAnsweredAndTheConnectionCarriesOn()
    {
        QSignalSpy requests(m_peer.get(), &AdminPeer::requestReceived);
        m_console->write("this is not json\n");
        auto reply = nextMessage();
        QVERIFY(reply);
        QCOMPARE(int(reply->type), int(MessageType::Error));
        QCOMPARE(reply->errorCode, QString(errorMalformed));

        // A request before the hello is refused, naming its id.
        m_console->write(encode(Message::request(4, methodSnapshot)));
        reply = nextMessage();
        QVERIFY(reply);
        QCOMPARE(reply->errorCode, QString(errorMalformed));
        QCOMPARE(reply->id, std::optional<qint64>(4));
        QVERIFY(reply->errorMessage.contains("hello"));

        m_console->write(encode(Message::hello("test", "1")));
        m_console->write(QByteArray(maxLineBytes + 100, 'x') + '\n');
        reply = nextMessage();
        QVERIFY(reply);
        QCOMPARE(reply->errorCode, QString(errorOversized));

        m_console->write(R"({"type":"request","id":5,"method":"x","params":7})"
                         "\n");
        reply = nextMessage();
        QVERIFY(reply);
        QCOMPARE(reply->errorCode, QString(errorMalformed));
        QCOMPARE(reply->id, std::optional<qint64>(5));

        m_console->write(encode(Message::request(6, methodSnapshot, {{"a", 1}})));
        QTRY_COMPARE_WITH_TIMEOUT(requests.count(), 1, 5000);
        const auto request = requests.at(0).at(1).value<Message>();
        QCOMPARE(request.id, std::optional<qint64>(6));
        QCOMPARE(request.name, QString(methodSnapshot));
        QCOMPARE(m_console->state(), QLocalSocket::ConnectedState);
    }

    void versionMismatchEndsTheConnection()
    {
        Message hello = Message::hello("test", "1");
        hello.version = protocolVersion + 1;
        m_console->write(encode(hello));
        const auto reply = nextMessage();
        QVERIFY(reply);
        QCOMPARE(reply->errorCode, QString(errorVersion));
        QTRY_COMPARE_WITH_TIMEOUT(m_console->state(), QLocalSocket::UnconnectedState, 5000);
    }

    void eventsWaitForTheHello()
    {
        m_peer->sendEvent(Message::event(eventCounters, {}));
        m_console->write(encode(Message::hello("test", "1")));
        // The peer reads its lines in order: once it has the request, it has the hello.
        QSignalSpy requests(m_peer.get(), &AdminPeer::requestReceived);
        m_console->write(encode(Message::request(1, methodSnapshot)));
        QVERIFY(requests.wait(5000));
        m_peer->sendEvent(Message::event(eventLog, {{"text", "after"}}));
        const auto event = nextMessage();
        QVERIFY(event);
        QCOMPARE(event->name, QString(eventLog));
    }

    void aConsoleThatDoesNotReadCostsBoundedMemory()
    {
        m_console->write(encode(Message::hello("test", "1")));
        m_console->setReadBufferSize(16 * 1024); // the console stops reading
        QTest::qWait(50);
        const QString text(2000, u'e');
        const int sent = 20000; // 40 MB of events
        for (int i = 0; i < sent; ++i) {
            m_peer->sendEvent(Message::event(eventLog, {{"i", i}, {"text", text}}));
            if (i % 500 == 0)
                QCoreApplication::processEvents();
        }
        QVERIFY(m_peer->droppedTotal() > 0);
        QVERIFY(m_peer->droppedTotal() < quint64(sent));
        QCOMPARE(m_console->state(), QLocalSocket::ConnectedState);

        // Now it reads everything: the events up to the queue's limit, then a "dropped" event
        // with the count, then newer events again.
        m_console->setReadBufferSize(0);
        int received = 0;
        qint64 droppedReported = 0;
        for (;;) {
            const auto message = nextMessage();
            QVERIFY2(message, "the dropped event never came");
            if (message->name == QLatin1String(eventDropped)) {
                droppedReported = qint64(message->body.value("count").toDouble());
                break;
            }
            ++received;
        }
        QCOMPARE(droppedReported, qint64(m_peer->droppedTotal()));
        QCOMPARE(received + droppedReported, qint64(sent));
        // What was queued: the soft limit, plus what the kernel and the read buffer held.
        QVERIFY(qint64(received) * 2000 <= AdminPeer::softLimit + 1024 * 1024);
        m_peer->sendEvent(Message::event(eventCounters, {{"after", true}}));
        const auto after = nextMessage();
        QVERIFY(after);
        QCOMPARE(after->name, QString(eventCounters));
    }
};

QTEST_GUILESS_MAIN(TestAdminPeer)
#include "tst_adminpeer.moc"
