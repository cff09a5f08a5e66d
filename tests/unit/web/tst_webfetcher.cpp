// WebFetcher against loopback servers: the request goes to the address the gate checked (with
// the host in the Host header and in TLS), redirects are decided again hop by hop, and the size
// and time limits stop a download while it runs.

#include "egress/EgressGate.h"
#include "support/FakeResolver.h"
#include "support/LoopbackHttpServer.h"
#include "web/WebFetcher.h"

#include <QFile>
#include <QSslKey>
#include <QSslSocket>
#include <QTest>

#include <optional>

#include <poll.h>
#include <sys/socket.h>
#include <zlib.h>

using namespace cmcp;

namespace {

const QHostAddress loopback1(QStringLiteral("127.0.0.1"));
const QHostAddress loopback2(QStringLiteral("127.0.0.2"));

QByteArray readData(const char *name)
{
    QFile file(QStringLiteral(CMCP_TEST_DATA "/") + QLatin1String(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read test data %s", name);
    return file.readAll();
}

QByteArray gzipped(const QByteArray &data)
{
    z_stream stream{};
    deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
    QByteArray out(int(deflateBound(&stream, uLong(data.size()))), Qt::Uninitialized);
    stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
    stream.avail_in = uInt(data.size());
    stream.next_out = reinterpret_cast<Bytef *>(out.data());
    stream.avail_out = uInt(out.size());
    deflate(&stream, Z_FINISH);
    out.truncate(qsizetype(stream.total_out));
    deflateEnd(&stream);
    return out;
}

// A TLS server for web.test (certificate signed by the tests' CA) that records the first bytes
// of each ClientHello, where the SNI name travels in clear.
class TlsServer : public QTcpServer
{
public:
    QList<QByteArray> clientHellos;
    int handshakes = 0;

protected:
    void incomingConnection(qintptr descriptor) override
    {
        // The client runs in Qt's HTTP thread: waiting here for its hello blocks nothing it needs.
        pollfd readable{int(descriptor), POLLIN, 0};
        QByteArray hello(4096, '\0');
        if (poll(&readable, 1, 5000) == 1) {
            const ssize_t n = recv(int(descriptor), hello.data(), size_t(hello.size()), MSG_PEEK);
            hello.truncate(n > 0 ? n : 0);
        }
        clientHellos.append(hello);
        auto *socket = new QSslSocket(this);
        socket->setSocketDescriptor(descriptor);
        socket->setLocalCertificate(QSslCertificate(readData("web-test-server.pem")));
        socket->setPrivateKey(QSslKey(readData("web-test-server.key"), QSsl::Ec));
        connect(socket, &QSslSocket::encrypted, this, [this] { ++handshakes; });
        connect(socket, &QSslSocket::readyRead, socket, [socket] {
            if (!socket->readAll().contains("\r\n\r\n"))
                return;
            socket->write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                          "6\r\n\r\nsecret");
        });
        connect(socket, &QSslSocket::disconnected, socket, &QObject::deleteLater);
        connect(socket, &QSslSocket::sslErrors, socket, [](const QList<QSslError> &) {});
        socket->startServerEncryption();
    }
};

} // namespace

class TestWebFetcher : public QObject
{
    Q_OBJECT

    std::shared_ptr<FakeResolver> m_resolver;
    LoopbackHttpServer *m_first = nullptr; // 127.0.0.1:port
    LoopbackHttpServer *m_second = nullptr; // 127.0.0.2:port, the same port
    quint16 m_port = 0;

    static std::shared_ptr<const EgressGate> gate(std::shared_ptr<HostResolver> resolver,
                                                  const QStringList &domains, bool allowPrivate,
                                                  const QList<QUrl> &trusted = {},
                                                  bool trustedMayBePrivate = false)
    {
        QString error;
        std::optional<EgressPolicy> policy =
                EgressPolicy::create({domains, allowPrivate, trusted, trustedMayBePrivate}, &error);
        if (!policy)
            qFatal("%s", qPrintable(error));
        return std::make_shared<const EgressGate>(*policy, std::move(resolver));
    }

    FetchResult fetch(WebFetcher &fetcher, FetchRequest request, int waitMs = 10000)
    {
        std::optional<FetchResult> result;
        fetcher.fetch(request, [&](const FetchResult &r) { result = r; });
        if (!QTest::qWaitFor([&] { return result.has_value(); }, waitMs))
            qFatal("no fetch result within %d ms", waitMs);
        return *result;
    }

    FetchResult fetch(WebFetcher &fetcher, const QString &url)
    {
        FetchRequest request;
        request.url = QUrl(url);
        return fetch(fetcher, request);
    }

    QString at(const char *host, const char *path = "/") const
    {
        return QStringLiteral("http://%1:%2%3")
                .arg(QLatin1String(host))
                .arg(m_port)
                .arg(QLatin1String(path));
    }

private Q_SLOTS:
    void init()
    {
        m_resolver = std::make_shared<FakeResolver>();
        m_first = new LoopbackHttpServer(this);
        m_second = new LoopbackHttpServer(this);
        m_port = m_first->listen(loopback1);
        QVERIFY(m_port);
        QVERIFY2(m_second->listen(loopback2, m_port),
                 "127.0.0.2 must be usable (Linux routes 127/8 to lo)");
    }

    void cleanup()
    {
        delete m_first;
        delete m_second;
    }

    void theRequestGoesToTheCheckedAddressWithTheHostHeader()
    {
        m_resolver->answer(QStringLiteral("site.test"), {{loopback1}});
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        const FetchResult result = fetch(fetcher, at("site.test", "/page?q=1"));
        QVERIFY2(result.ok, qPrintable(result.error));
        QCOMPARE(result.status, 200);
        QCOMPARE(result.body,
                 QByteArray("<html><head><title>ok</title></head><body>ok</body></html>"));
        QCOMPARE(result.url, QUrl(at("site.test", "/page?q=1")));
        QCOMPARE(result.address, loopback1);
        QCOMPARE(m_first->requests().size(), 1);
        QCOMPARE(m_first->requests().at(0).host,
                 QStringLiteral("site.test:%1").arg(m_port).toLatin1());
        QCOMPARE(m_first->requests().at(0).path, QByteArray("/page?q=1"));
        // One Host header, the name's: Qt adds none of its own with the address.
        QCOMPARE(m_first->requests().at(0).head.toLower().count("\r\nhost:"), 1);
        // ".test" names exist in no DNS: the client was never asked to resolve one itself.
        QCOMPARE(m_resolver->lookups(QStringLiteral("site.test")), 1);
    }

    void aRebindingNameCannotReachItsSecondAnswer()
    {
        // The name answers 127.0.0.1 first and 127.0.0.2 afterwards: whatever the client did
        // later, the one request lands where the checked answer pointed.
        m_resolver->answer(QStringLiteral("rebind.test"), {{loopback1}, {loopback2}});
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        const FetchResult result = fetch(fetcher, at("rebind.test"));
        QVERIFY2(result.ok, qPrintable(result.error));
        QCOMPARE(m_first->requests().size(), 1);
        QCOMPARE(m_second->connections(), 0);
        QCOMPARE(m_resolver->lookups(QStringLiteral("rebind.test")), 1);
    }

    void aNameResolvingToLoopbackIsRefusedBeforeAnyConnection()
    {
        m_resolver->answer(QStringLiteral("inside.test"), {{loopback1}});
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, false));
        const FetchResult refused = fetch(fetcher, at("inside.test"));
        QVERIFY(!refused.ok);
        QVERIFY2(refused.error.startsWith(QLatin1String(
                         "refused (WEB_ALLOW_PRIVATE): inside.test resolves to 127.0.0.1")),
                 qPrintable(refused.error));
        QCOMPARE(m_first->connections(), 0);
    }

    void redirectsToRefusedHostsAreNotFollowed_data()
    {
        QTest::addColumn<QByteArray>("location");
        QTest::addColumn<QString>("rule");
        QTest::newRow("another host") << QByteArray("http://127.0.0.2:PORT/secret")
                                      << QStringLiteral("WEB_ALLOWED_DOMAINS");
        QTest::newRow("decimal loopback") << QByteArray("http://2130706434:PORT/secret")
                                          << QStringLiteral("WEB_ALLOWED_DOMAINS");
        QTest::newRow("metadata") << QByteArray("http://169.254.169.254/latest/meta-data/")
                                  << QStringLiteral("WEB_ALLOWED_DOMAINS");
        QTest::newRow("file") << QByteArray("file:///etc/passwd") << QStringLiteral("scheme");
        QTest::newRow("protocol-relative")
                << QByteArray("//127.0.0.2:PORT/secret") << QStringLiteral("WEB_ALLOWED_DOMAINS");
    }

    void redirectsToRefusedHostsAreNotFollowed()
    {
        QFETCH(QByteArray, location);
        QFETCH(QString, rule);
        location.replace("PORT", QByteArray::number(m_port));
        m_resolver->answer(QStringLiteral("site.test"), {{loopback1}});
        m_first->setHandler([location](const RecordedRequest &, HttpExchange &exchange) {
            exchange.redirect(302, location);
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("site.test")}, true));
        const FetchResult result = fetch(fetcher, at("site.test"));
        QVERIFY(!result.ok);
        QVERIFY2(result.error.startsWith(QStringLiteral("refused (%1)").arg(rule)),
                 qPrintable(result.error));
        QVERIFY2(result.error.contains(QLatin1String("redirected to")), qPrintable(result.error));
        QCOMPARE(m_second->connections(), 0);
    }

    void aRedirectFromATrustedOriginToPrivateSpaceIsRefused()
    {
        // A search back end on loopback (WEB_SEARCH_ALLOW_PRIVATE) is trusted; where it
        // redirects to is not.
        m_first->setHandler([this](const RecordedRequest &, HttpExchange &exchange) {
            exchange.redirect(301, at("127.0.0.2", "/internal").toLatin1());
        });
        m_resolver->answer(QStringLiteral("localhost"), {{loopback2}});
        WebFetcher fetcher(
                gate(m_resolver, {QStringLiteral("*")}, false, {QUrl(at("127.0.0.1"))}, true));
        const FetchResult result = fetch(fetcher, at("127.0.0.1", "/search"));
        QVERIFY(!result.ok);
        QVERIFY2(result.error.startsWith(QLatin1String(
                         "refused (WEB_ALLOW_PRIVATE): 127.0.0.2 is a non-public address")),
                 qPrintable(result.error));
        QCOMPARE(m_first->requests().size(), 1);
        QCOMPARE(m_second->connections(), 0);
    }

    void allowedRedirectsAreFollowedAndRecorded()
    {
        m_resolver->answer(QStringLiteral("site.test"), {{loopback1}});
        m_resolver->answer(QStringLiteral("other.test"), {{loopback2}});
        m_first->setHandler([this](const RecordedRequest &request, HttpExchange &exchange) {
            if (request.path == "/start")
                exchange.redirect(302, "/relative");
            else
                exchange.redirect(307, at("other.test", "/final").toLatin1());
        });
        m_second->setHandler([](const RecordedRequest &, HttpExchange &exchange) {
            exchange.respond(200, "final", "text/plain; charset=utf-8");
        });
        WebFetcher fetcher(gate(m_resolver,
                                {QStringLiteral("site.test"), QStringLiteral("other.test")}, true));
        const FetchResult result = fetch(fetcher, at("site.test", "/start"));
        QVERIFY2(result.ok, qPrintable(result.error));
        QCOMPARE(result.body, QByteArray("final"));
        QCOMPARE(result.contentType, QByteArray("text/plain; charset=utf-8"));
        QCOMPARE(result.url, QUrl(at("other.test", "/final")));
        QCOMPARE(result.redirects,
                 (QList<QUrl>{QUrl(at("site.test", "/relative")),
                              QUrl(at("other.test", "/final"))}));
        QCOMPARE(m_second->requests().at(0).host,
                 QStringLiteral("other.test:%1").arg(m_port).toLatin1());
    }

    void headersStayWithTheirOrigin()
    {
        m_resolver->answer(QStringLiteral("api.test"), {{loopback1}});
        m_resolver->answer(QStringLiteral("elsewhere.test"), {{loopback2}});
        m_first->setHandler([this](const RecordedRequest &, HttpExchange &exchange) {
            exchange.redirect(302, at("elsewhere.test", "/landing").toLatin1());
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        FetchRequest request;
        request.url = QUrl(at("api.test", "/search"));
        request.headers = {{"Accept", "application/json"}, {"X-Subscription-Token", "secret-key"}};
        const FetchResult result = fetch(fetcher, request);
        QVERIFY2(result.ok, qPrintable(result.error));
        QVERIFY(m_first->requests().at(0).head.contains("X-Subscription-Token: secret-key"));
        QVERIFY(!m_second->requests().at(0).head.contains("secret-key"));
        QVERIFY(m_second->requests().at(0).head.contains("Accept: application/json"));
    }

    void redirectLoopsEnd()
    {
        m_first->setHandler([](const RecordedRequest &, HttpExchange &exchange) {
            exchange.redirect(302, "/again");
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        const FetchResult result = fetch(fetcher, at("127.0.0.1"));
        QVERIFY(!result.ok);
        QVERIFY2(result.error.startsWith(QLatin1String("more than 10 redirects")),
                 qPrintable(result.error));
        QCOMPARE(m_first->requests().size(), 11);
    }

    void errorStatusesAreAnswers()
    {
        m_first->setHandler([](const RecordedRequest &, HttpExchange &exchange) {
            exchange.respond(404, "gone");
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        const FetchResult result = fetch(fetcher, at("127.0.0.1"));
        QVERIFY2(result.ok, qPrintable(result.error));
        QCOMPARE(result.status, 404);
        QCOMPARE(result.body, QByteArray("gone"));
    }

    void aDeclaredLargeBodyIsRefusedBeforeItArrives()
    {
        auto written = std::make_shared<qint64>(0);
        m_first->setHandler([written](const RecordedRequest &, HttpExchange &exchange) {
            exchange.write("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
                           "50000000\r\n\r\n");
            exchange.drip(QByteArray(64 * 1024, 'x'), 1, 0, written);
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        FetchRequest request;
        request.url = QUrl(at("127.0.0.1"));
        request.maxBytes = 100000;
        const FetchResult result = fetch(fetcher, request);
        QVERIFY(!result.ok);
        QVERIFY2(result.error.contains(QLatin1String("larger than WEB_MAX_BYTES (100000 bytes)")),
                 qPrintable(result.error));
        QVERIFY(result.body.isEmpty());
        QTest::qWait(200);
        QVERIFY2(*written < 5000000, qPrintable(QString::number(*written)));
    }

    void anUndeclaredEndlessBodyIsCutOff()
    {
        auto written = std::make_shared<qint64>(0);
        m_first->setHandler([written](const RecordedRequest &, HttpExchange &exchange) {
            exchange.write(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n");
            exchange.drip(QByteArray(16 * 1024, 'y'), 1, 0, written);
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        FetchRequest request;
        request.url = QUrl(at("127.0.0.1"));
        request.maxBytes = 200000;
        const FetchResult result = fetch(fetcher, request);
        QVERIFY(!result.ok);
        QVERIFY2(result.error.contains(QLatin1String("WEB_MAX_BYTES")), qPrintable(result.error));
        QTest::qWait(300);
        const qint64 afterAbort = *written;
        QTest::qWait(300);
        // The connection is gone: the drip stopped.
        QCOMPARE(*written, afterAbort);
        QVERIFY2(afterAbort < 20000000, qPrintable(QString::number(afterAbort)));
    }

    void aCompressedBombIsCountedAsItInflates()
    {
        const QByteArray bomb = gzipped(QByteArray(50 * 1024 * 1024, '\0'));
        QVERIFY(bomb.size() < 200000);
        m_first->setHandler([bomb](const RecordedRequest &, HttpExchange &exchange) {
            exchange.respond(200, bomb, "text/html", {{"Content-Encoding", "gzip"}});
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        FetchRequest request;
        request.url = QUrl(at("127.0.0.1"));
        request.maxBytes = 1024 * 1024;
        const FetchResult result = fetch(fetcher, request);
        QVERIFY(!result.ok);
        QVERIFY2(result.error.contains(QLatin1String("WEB_MAX_BYTES")), qPrintable(result.error));
    }

    void aSmallCompressedBodyIsInflated()
    {
        const QByteArray page = QByteArray("<p>compressed</p>").repeated(1000);
        m_first->setHandler([page](const RecordedRequest &, HttpExchange &exchange) {
            exchange.respond(200, gzipped(page), "text/html", {{"Content-Encoding", "gzip"}});
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        const FetchResult result = fetch(fetcher, at("127.0.0.1"));
        QVERIFY2(result.ok, qPrintable(result.error));
        QCOMPARE(result.body, page);
    }

    void aSlowBodyTimesOut()
    {
        m_first->setHandler([](const RecordedRequest &, HttpExchange &exchange) {
            exchange.write(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n");
            exchange.drip("x", 100, 0);
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        FetchRequest request;
        request.url = QUrl(at("127.0.0.1"));
        request.timeoutMs = 700;
        QElapsedTimer clock;
        clock.start();
        const FetchResult result = fetch(fetcher, request);
        QVERIFY(!result.ok);
        QVERIFY2(result.error.contains(QLatin1String("within 0.7 s (WEB_TIMEOUT_DEFAULT)")),
                 qPrintable(result.error));
        QVERIFY(clock.elapsed() >= 650 && clock.elapsed() < 3000);
    }

    void aConnectionRefusedTriesTheNextCheckedAddress()
    {
        // 127.0.0.3 (where nothing listens) first, then 127.0.0.1.
        m_resolver->answer(QStringLiteral("two.test"),
                           {{QHostAddress(QStringLiteral("127.0.0.3")), loopback1}});
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        const FetchResult result = fetch(fetcher, at("two.test"));
        QVERIFY2(result.ok, qPrintable(result.error));
        QCOMPARE(result.address, loopback1);
    }

    void abortStopsWithoutACallback()
    {
        auto served = std::make_shared<std::optional<HttpExchange>>();
        m_first->setHandler([served](const RecordedRequest &, HttpExchange &exchange) {
            exchange.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
            exchange.drip("x", 50, 0);
            *served = exchange;
        });
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        FetchRequest request;
        request.url = QUrl(at("127.0.0.1"));
        bool called = false;
        const quint64 id = fetcher.fetch(request, [&](const FetchResult &) { called = true; });
        QTRY_COMPARE(m_first->requests().size(), 1);
        fetcher.abort(id);
        // Once the server has seen the connection close, nothing of that fetch can come back.
        QTRY_VERIFY_WITH_TIMEOUT(served->has_value() && !(*served)->connected(), 5000);
        QVERIFY(!called);
    }

    void httpsVerifiesTheHostNameNotTheAddress()
    {
        TlsServer tls;
        QVERIFY(tls.listen(loopback1));
        const quint16 port = tls.serverPort();
        m_resolver->answer(QStringLiteral("web.test"), {{loopback1}});
        m_resolver->answer(QStringLiteral("other.test"), {{loopback1}});
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        fetcher.addCaCertificates({QSslCertificate(readData("web-test-ca.pem"))});

        const FetchResult good = fetch(fetcher, QStringLiteral("https://web.test:%1/").arg(port));
        QVERIFY2(good.ok, qPrintable(good.error));
        QCOMPARE(good.body, QByteArray("secret"));
        // SNI carried the host name, not the address the connection went to.
        QVERIFY(tls.clientHellos.value(0).contains("web.test"));

        // Same address and port, another name: the certificate does not cover it. A connection
        // kept open for web.test must not be reused for it.
        const FetchResult wrongName =
                fetch(fetcher, QStringLiteral("https://other.test:%1/").arg(port));
        QVERIFY(!wrongName.ok);
        QVERIFY2(wrongName.error.contains(QLatin1String("host name did not match")),
                 qPrintable(wrongName.error));
        QVERIFY(tls.clientHellos.last().contains("other.test"));

        // The address itself is not a name the certificate holds either.
        const FetchResult byAddress =
                fetch(fetcher, QStringLiteral("https://127.0.0.1:%1/").arg(port));
        QVERIFY(!byAddress.ok);
    }

    void anUntrustedCertificateFails()
    {
        TlsServer tls;
        QVERIFY(tls.listen(loopback1));
        m_resolver->answer(QStringLiteral("web.test"), {{loopback1}});
        WebFetcher fetcher(gate(m_resolver, {QStringLiteral("*")}, true));
        const FetchResult result =
                fetch(fetcher, QStringLiteral("https://web.test:%1/").arg(tls.serverPort()));
        QVERIFY(!result.ok);
        QVERIFY2(result.error.contains(QLatin1String("cannot fetch https://web.test")),
                 qPrintable(result.error));
    }
};

QTEST_GUILESS_MAIN(TestWebFetcher)
#include "tst_webfetcher.moc"
