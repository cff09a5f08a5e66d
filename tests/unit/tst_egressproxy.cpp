// The browser's egress proxy against loopback servers: plain http is forwarded to the checked
// address with the path alone, CONNECT becomes a tunnel to the checked address, and refused
// targets get 403 with the gate's reason and no connection at all, a rebinding name included.

#include "web/EgressProxy.h"
#include "FakeResolver.h"
#include "LoopbackHttpServer.h"

#include <QSignalSpy>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <QTcpSocket>
#include <QTest>

using namespace cmcp;

namespace {

const QHostAddress loopback1(QStringLiteral("127.0.0.1"));
const QHostAddress loopback2(QStringLiteral("127.0.0.2"));

} // namespace

class TestEgressProxy : public QObject
{
    Q_OBJECT

    std::shared_ptr<FakeResolver> m_resolver;
    LoopbackHttpServer *m_first = nullptr;
    LoopbackHttpServer *m_second = nullptr;
    quint16 m_port = 0;

    std::unique_ptr<EgressProxy> proxy(const QStringList &domains, bool allowPrivate,
                                       qint64 maxBytes = 10 * 1024 * 1024)
    {
        QString error;
        std::optional<EgressPolicy> policy =
                EgressPolicy::create({domains, allowPrivate, {}}, &error);
        if (!policy)
            qFatal("%s", qPrintable(error));
        auto made = std::make_unique<EgressProxy>(
                std::make_shared<const EgressGate>(*policy, m_resolver),
                EgressProxy::Options{maxBytes, 5000});
        if (!made->listen())
            qFatal("the proxy cannot listen");
        return made;
    }

    // Sends `request` to the proxy and returns everything it answers until it closes.
    static QByteArray exchange(const EgressProxy &proxy, const QByteArray &request,
                               const QByteArray &afterConnect = {})
    {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, proxy.port());
        if (!socket.waitForConnected(3000))
            return "no connection";
        socket.write(request);
        QByteArray answer;
        bool sentAfter = afterConnect.isEmpty();
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 5000) {
            QTest::qWait(10);
            answer += socket.readAll();
            if (!sentAfter && answer.contains("\r\n\r\n")) {
                socket.write(afterConnect);
                sentAfter = true;
            }
            if (socket.state() == QAbstractSocket::UnconnectedState)
                break;
        }
        return answer + socket.readAll();
    }

private Q_SLOTS:
    void init()
    {
        m_resolver = std::make_shared<FakeResolver>();
        m_first = new LoopbackHttpServer(this);
        m_second = new LoopbackHttpServer(this);
        m_port = m_first->listen(loopback1);
        QVERIFY(m_port);
        QVERIFY(m_second->listen(loopback2, m_port));
    }

    void cleanup()
    {
        delete m_first;
        delete m_second;
    }

    void plainHttpIsForwardedToTheCheckedAddress()
    {
        m_resolver->answer(QStringLiteral("site.test"), {{loopback1}});
        const auto gate = proxy({QStringLiteral("site.test")}, true);
        const QByteArray answer = exchange(
                *gate,
                QStringLiteral(
                        "GET http://site.test:%1/page?q=1 HTTP/1.1\r\nHost: "
                        "site.test:%1\r\nProxy-Connection: keep-alive\r\nX-Keep: yes\r\n\r\n")
                        .arg(m_port)
                        .toLatin1());
        QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
        QVERIFY(answer.contains("<title>ok</title>"));
        QCOMPARE(m_first->requests().size(), 1);
        const RecordedRequest &request = m_first->requests().at(0);
        QCOMPARE(request.path, QByteArray("/page?q=1"));
        QCOMPARE(request.host, QStringLiteral("site.test:%1").arg(m_port).toLatin1());
        QVERIFY(request.head.contains("X-Keep: yes\r\n"));
        QVERIFY(request.head.contains("Connection: close\r\n"));
        QVERIFY(!request.head.toLower().contains("proxy-connection"));
    }

    void connectBecomesATunnelToTheCheckedAddress()
    {
        m_resolver->answer(QStringLiteral("site.test"), {{loopback1}});
        const auto gate = proxy({QStringLiteral("*")}, true);
        const QByteArray answer = exchange(
                *gate,
                QStringLiteral("CONNECT site.test:%1 HTTP/1.1\r\nHost: site.test:%1\r\n\r\n")
                        .arg(m_port)
                        .toLatin1(),
                "GET /through HTTP/1.1\r\nHost: site.test\r\n\r\n");
        QVERIFY2(answer.startsWith("HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200"),
                 answer.constData());
        QCOMPARE(m_first->requests().value(0).path, QByteArray("/through"));
    }

    void refusedTargetsGet403AndNoConnection_data()
    {
        QTest::addColumn<QString>("request");
        QTest::addColumn<QString>("rule");
        QTest::newRow("CONNECT to a host not listed")
                << QStringLiteral("CONNECT 127.0.0.2:PORT HTTP/1.1\r\n\r\n")
                << QStringLiteral("WEB_ALLOWED_DOMAINS");
        QTest::newRow("GET to a host not listed")
                << QStringLiteral("GET http://127.0.0.2:PORT/ HTTP/1.1\r\n\r\n")
                << QStringLiteral("WEB_ALLOWED_DOMAINS");
        QTest::newRow("decimal address")
                << QStringLiteral("GET http://2130706434:PORT/ HTTP/1.1\r\n\r\n")
                << QStringLiteral("WEB_ALLOWED_DOMAINS");
        QTest::newRow("a name resolving to loopback")
                << QStringLiteral("GET http://inside.test:PORT/ HTTP/1.1\r\n\r\n")
                << QStringLiteral("WEB_ALLOW_PRIVATE");
        QTest::newRow("CONNECT to a name resolving to loopback")
                << QStringLiteral("CONNECT inside.test:PORT HTTP/1.1\r\n\r\n")
                << QStringLiteral("WEB_ALLOW_PRIVATE");
    }

    void refusedTargetsGet403AndNoConnection()
    {
        QFETCH(QString, request);
        QFETCH(QString, rule);
        m_resolver->answer(QStringLiteral("inside.test"), {{loopback2}});
        // Names are allowed, addresses must be public: 127.0.0.2 is neither listed nor public.
        const auto gate = proxy({QStringLiteral("*.test"), QStringLiteral("site.test")}, false);
        QSignalSpy refusals(gate.get(), &EgressProxy::refused);
        const QByteArray answer = exchange(
                *gate, request.replace(QLatin1String("PORT"), QString::number(m_port)).toLatin1());
        QVERIFY2(answer.startsWith("HTTP/1.1 403 Forbidden"), answer.constData());
        QVERIFY2(answer.contains(QStringLiteral("refused (%1)").arg(rule).toLatin1()),
                 answer.constData());
        QCOMPARE(refusals.size(), 1);
        QCOMPARE(m_first->connections() + m_second->connections(), 0);
    }

    // A job's listener is made in its own network namespace and handed over: the proxy serves
    // it as its own, and holds a job to its number of connections.
    void aListenerMadeElsewhereIsServedWithinTheConnectionCap()
    {
        const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        QVERIFY(::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0);
        QVERIFY(::listen(listener, 8) == 0);
        QVERIFY(::getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length) == 0);

        QString error;
        std::optional<EgressPolicy> policy =
                EgressPolicy::create({{QStringLiteral("site.test")}, true, {}}, &error);
        QVERIFY(policy);
        EgressProxy gate(std::make_shared<const EgressGate>(*policy, m_resolver),
                         EgressProxy::Options{1024 * 1024, 5000, 1});
        QVERIFY(gate.serveListening(listener));
        QCOMPARE(gate.port(), ntohs(address.sin_port));
        QSignalSpy refusals(&gate, &EgressProxy::refused);

        QTcpSocket first; // holds the one connection allowed, its head unfinished
        first.connectToHost(QHostAddress::LocalHost, gate.port());
        QVERIFY(first.waitForConnected(3000));
        first.write("CONNECT site.test:1 HTTP/1.1\r\n");
        QTRY_COMPARE(gate.openConnections(), 1);
        QTcpSocket second;
        second.connectToHost(QHostAddress::LocalHost, gate.port());
        QTRY_COMPARE(second.state(), QAbstractSocket::UnconnectedState);
        QCOMPARE(second.readAll(), QByteArray());
        QCOMPARE(refusals.size(), 1);
        QVERIFY(refusals.at(0).at(1).toString().startsWith(
                QStringLiteral("refused (connections): 1 are open already")));
        QCOMPARE(gate.openConnections(), 1);
    }

    void aRebindingNameReachesOnlyItsCheckedAnswer()
    {
        // 127.0.0.1 first, 127.0.0.2 for every later lookup: one request, one lookup, and the
        // connection where the checked answer pointed.
        m_resolver->answer(QStringLiteral("rebind.test"), {{loopback1}, {loopback2}});
        const auto gate = proxy({QStringLiteral("*")}, true);
        const QByteArray answer = exchange(
                *gate,
                QStringLiteral("CONNECT rebind.test:%1 HTTP/1.1\r\n\r\n").arg(m_port).toLatin1(),
                "GET / HTTP/1.1\r\nHost: rebind.test\r\n\r\n");
        QVERIFY2(answer.contains("<title>ok</title>"), answer.constData());
        QCOMPARE(m_resolver->lookups(QStringLiteral("rebind.test")), 1);
        QCOMPARE(m_first->requests().size(), 1);
        QCOMPARE(m_second->connections(), 0);
    }

    void aLargeResponseIsCutOff()
    {
        m_first->setHandler([](const RecordedRequest &, HttpExchange &exchange) {
            exchange.write("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n");
            exchange.drip(QByteArray(64 * 1024, 'z'), 1, 0);
        });
        const auto gate = proxy({QStringLiteral("*")}, true, 200000);
        QSignalSpy refusals(gate.get(), &EgressProxy::refused);
        const QByteArray answer = exchange(
                *gate,
                QStringLiteral("GET http://127.0.0.1:%1/ HTTP/1.1\r\n\r\n").arg(m_port).toLatin1());
        QVERIFY2(answer.size() < 2 * 1024 * 1024, qPrintable(QString::number(answer.size())));
        QVERIFY(answer.size() > 100000);
        QCOMPARE(refusals.size(), 1);
        QVERIFY(refusals.at(0).at(1).toString().contains(QLatin1String("WEB_MAX_BYTES")));
    }

    void notAProxyRequest()
    {
        const auto gate = proxy({QStringLiteral("*")}, true);
        QVERIFY(exchange(*gate, "GET / HTTP/1.1\r\nHost: x\r\n\r\n").startsWith("HTTP/1.1 400"));
        QVERIFY(exchange(*gate, "GET https://127.0.0.1/ HTTP/1.1\r\n\r\n")
                        .startsWith("HTTP/1.1 400"));
        QVERIFY(exchange(*gate, "nonsense\r\n\r\n").startsWith("HTTP/1.1 400"));
        QCOMPARE(m_first->connections(), 0);
    }

    void connectionsAreReleased()
    {
        const auto gate = proxy({QStringLiteral("*")}, true);
        for (int i = 0; i < 5; ++i)
            QVERIFY(exchange(*gate,
                             QStringLiteral("GET http://127.0.0.1:%1/ HTTP/1.1\r\n\r\n")
                                     .arg(m_port)
                                     .toLatin1())
                            .startsWith("HTTP/1.1 200"));
        QTRY_COMPARE(gate->openConnections(), 0);
    }
};

QTEST_GUILESS_MAIN(TestEgressProxy)
#include "tst_egressproxy.moc"
