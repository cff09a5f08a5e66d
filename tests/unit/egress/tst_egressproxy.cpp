// The browser's egress proxy against loopback servers: plain http is forwarded to the checked
// address with the path alone, CONNECT becomes a tunnel to the checked address, and refused
// targets get 403 with the gate's reason and no connection at all, a rebinding name included.
// A tunnel's TLS ClientHello must name the host the tunnel was granted for (no fronting), and
// a tunnel nothing moves on is closed.

#include "egress/EgressProxy.h"
#include "support/FakeResolver.h"
#include "support/LoopbackHttpServer.h"
#include "TlsHelloBuilder.h"

#include <QSignalSpy>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <QTcpServer>
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

    // A TCP server that records every byte it receives, as a tunnel's far end.
    struct RawServer
    {
        QTcpServer server;
        QByteArray received;
        int connections = 0;
        QList<QTcpSocket *> sockets;

        quint16 listen()
        {
            QObject::connect(&server, &QTcpServer::newConnection, &server, [this] {
                while (QTcpSocket *socket = server.nextPendingConnection()) {
                    ++connections;
                    sockets.append(socket);
                    QObject::connect(socket, &QTcpSocket::readyRead, socket,
                                     [this, socket] { received += socket->readAll(); });
                }
            });
            return server.listen(loopback1) ? server.serverPort() : 0;
        }
    };

    // Opens a tunnel to host:port through `gate` and returns the client's socket once the 200
    // has come.
    static std::unique_ptr<QTcpSocket> openTunnel(const EgressProxy &gate, const QString &host,
                                                  quint16 port)
    {
        // The proxy runs in this thread: wait in the event loop, never in the socket.
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QHostAddress::LocalHost, gate.port());
        socket->write(
                QStringLiteral("CONNECT %1:%2 HTTP/1.1\r\n\r\n").arg(host).arg(port).toLatin1());
        QByteArray answer;
        QElapsedTimer clock;
        clock.start();
        while (!answer.contains("\r\n\r\n") && clock.elapsed() < 5000) {
            QTest::qWait(5);
            while (!answer.contains("\r\n\r\n") && socket->bytesAvailable() > 0)
                answer += socket->read(1);
        }
        if (!answer.startsWith("HTTP/1.1 200 Connection Established\r\n\r\n"))
            return nullptr;
        return socket;
    }

    static bool closedWithin(QTcpSocket &socket, int ms)
    {
        QElapsedTimer clock;
        clock.start();
        while (socket.state() != QAbstractSocket::UnconnectedState && clock.elapsed() < ms)
            QTest::qWait(10);
        return socket.state() == QAbstractSocket::UnconnectedState;
    }

    std::unique_ptr<EgressProxy> proxyWith(const QStringList &domains, EgressProxy::Options options)
    {
        QString error;
        std::optional<EgressPolicy> policy = EgressPolicy::create({domains, true, {}}, &error);
        if (!policy)
            qFatal("%s", qPrintable(error));
        auto made = std::make_unique<EgressProxy>(
                std::make_shared<const EgressGate>(*policy, m_resolver), options);
        if (!made->listen())
            qFatal("the proxy cannot listen");
        return made;
    }

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
                EgressProxy::Options{.maxResponseBytes = maxBytes, .connectTimeoutMs = 5000});
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
                         EgressProxy::Options{.maxResponseBytes = 1024 * 1024,
                                              .connectTimeoutMs = 5000,
                                              .maxConnections = 1});
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

    void aTunnelsClientHelloMustNameItsHost_data()
    {
        QTest::addColumn<QString>("host"); // what the CONNECT asks for
        QTest::addColumn<QList<QByteArray>>("segments"); // what the client then writes
        QTest::addColumn<QString>("refusal"); // empty: the bytes reach the server

        const QByteArray site = test::clientHello("site.test");
        const QByteArray evil = test::clientHello("evil.test");
        const QByteArray noName = test::records(test::handshake(test::helloBody({})));
        QTest::newRow("the granted name") << "site.test" << QList<QByteArray>{site} << QString();
        QTest::newRow("the granted name, other case, trailing dot")
                << "site.test" << QList<QByteArray>{test::clientHello("SITE.Test.")} << QString();
        QTest::newRow("no name") << "site.test" << QList<QByteArray>{noName} << QString();
        QTest::newRow("the granted name in three segments")
                << "site.test" << QList<QByteArray>{site.left(3), site.mid(3, 50), site.mid(53)}
                << QString();
        QTest::newRow("a plain protocol")
                << "site.test" << QList<QByteArray>{"SSH-2.0-x\r\n"} << QString();
        QTest::newRow("another name (fronting)")
                << "site.test" << QList<QByteArray>{evil}
                << "refused (tls_server_name): the tunnel was granted for site.test, but its TLS "
                   "ClientHello names 'evil.test'; the tunnel was closed before any of it was "
                   "forwarded";
        QTest::newRow("another name, in three segments")
                << "site.test" << QList<QByteArray>{evil.left(1), evil.mid(1, 60), evil.mid(61)}
                << "refused (tls_server_name): the tunnel was granted for site.test";
        QTest::newRow("another name, in small records")
                << "site.test"
                << QList<QByteArray>{test::records(
                           test::handshake(
                                   test::helloBody({test::serverNameExtension("evil.test")})),
                           16)}
                << "refused (tls_server_name)";
        QTest::newRow("a name on an address")
                << "127.0.0.1" << QList<QByteArray>{site}
                << "refused (tls_server_name): the tunnel was granted for the address 127.0.0.1";
        QTest::newRow("no name on an address")
                << "127.0.0.1" << QList<QByteArray>{noName} << QString();
        QTest::newRow("a malformed hello")
                << "site.test"
                << QList<QByteArray>{site.left(9) + QByteArray(site.size() - 9, '\xff')}
                << "refused (tls_client_hello): ";
        QTest::newRow("a hello larger than the bound")
                << "site.test"
                << QList<QByteArray>{QByteArray("\x16\x03\x01\x40\x00\x01\x01\x00\x00", 9)}
                << "refused (tls_client_hello): its ClientHello declares 65536 bytes";
    }

    void aTunnelsClientHelloMustNameItsHost()
    {
        QFETCH(QString, host);
        QFETCH(QList<QByteArray>, segments);
        QFETCH(QString, refusal);
        RawServer server;
        const quint16 port = server.listen();
        QVERIFY(port);
        m_resolver->answer(QStringLiteral("site.test"), {{loopback1}});
        const auto gate = proxyWith({QStringLiteral("*")},
                                    {.maxResponseBytes = 1024 * 1024, .connectTimeoutMs = 5000});
        QSignalSpy refusals(gate.get(), &EgressProxy::refused);
        const std::unique_ptr<QTcpSocket> client = openTunnel(*gate, host, port);
        QVERIFY(client);
        QByteArray sent;
        for (const QByteArray &segment : segments) {
            client->write(segment);
            client->flush();
            sent += segment;
            QTest::qWait(30); // each its own segment
        }
        if (refusal.isEmpty()) {
            client->write("and then more");
            sent += "and then more";
            QTRY_COMPARE(server.received, sent);
            QCOMPARE(refusals.size(), 0);
            QCOMPARE(client->state(), QAbstractSocket::ConnectedState);
            return;
        }
        QVERIFY(closedWithin(*client, 3000));
        QCOMPARE(refusals.size(), 1);
        QCOMPARE(refusals.at(0).at(0).toString(), QStringLiteral("%1:%2").arg(host).arg(port));
        QVERIFY2(refusals.at(0).at(1).toString().startsWith(refusal),
                 qPrintable(refusals.at(0).at(1).toString()));
        QTest::qWait(50);
        QCOMPARE(server.connections, 1);
        QCOMPARE(server.received, QByteArray()); // not a byte of the hello was forwarded
    }

    // A hello begun and never finished holds a connection only for the connect time limit.
    void aHelloThatNeverEndsIsRefused()
    {
        RawServer server;
        const quint16 port = server.listen();
        QVERIFY(port);
        const auto gate = proxyWith({QStringLiteral("*")},
                                    {.maxResponseBytes = 1024 * 1024, .connectTimeoutMs = 300});
        QSignalSpy refusals(gate.get(), &EgressProxy::refused);
        const std::unique_ptr<QTcpSocket> client =
                openTunnel(*gate, QStringLiteral("127.0.0.1"), port);
        QVERIFY(client);
        client->write(test::clientHello("127.0.0.1").left(20));
        QVERIFY(closedWithin(*client, 3000));
        QCOMPARE(refusals.size(), 1);
        QVERIFY2(
                refusals.at(0).at(1).toString().startsWith(QStringLiteral(
                        "refused (tls_client_hello): its ClientHello was not whole within 300 ms")),
                qPrintable(refusals.at(0).at(1).toString()));
        QCOMPARE(server.received, QByteArray());
    }

    // Nothing either way for the idle bound closes a tunnel; bytes in either direction keep it.
    void anIdleTunnelIsClosed()
    {
        RawServer server;
        const quint16 port = server.listen();
        QVERIFY(port);
        EgressProxy::Options options{.maxResponseBytes = 1024 * 1024, .connectTimeoutMs = 5000};
        options.idleTimeoutMs = 400;
        const auto gate = proxyWith({QStringLiteral("*")}, options);
        const std::unique_ptr<QTcpSocket> busy =
                openTunnel(*gate, QStringLiteral("127.0.0.1"), port);
        QVERIFY(busy);
        busy->write("plain\n");
        QTRY_COMPARE(server.sockets.size(), 1);
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; clock.elapsed() < 1200; ++i) {
            // Alternately the client and the server speak, every 100 ms.
            if (i % 2 == 0)
                busy->write("c");
            else
                server.sockets.at(0)->write("s");
            QTest::qWait(100);
            QCOMPARE(busy->state(), QAbstractSocket::ConnectedState);
        }
        clock.restart();
        QVERIFY(closedWithin(*busy, 3000));
        QVERIFY2(clock.elapsed() >= 200, qPrintable(QString::number(clock.elapsed())));
        QTRY_COMPARE(gate->openConnections(), 0);
    }
};

QTEST_GUILESS_MAIN(TestEgressProxy)
#include "tst_egressproxy.moc"
