// The gate's secret presentation, driven in memory: a job's TLS client, the SecretTunnel and a
// TLS server, with every byte moved by the test. The secret reaches the server inside the
// gate's verified TLS and only for the host it is bound to; the job never sees it; a request
// for another Host, a server whose certificate the gate does not trust and a job that does not
// trust the gate's authority each end the exchange with the reason and the secret unsent.

#include "egress/GateAuthority.h"
#include "egress/GateSecrets.h"
#include "egress/SecretTunnel.h"
#include "egress/TlsEngine.h"

#include <QTemporaryFile>
#include <QTest>

#include <openssl/pem.h>
#include <openssl/ssl.h>

using namespace cmcp;

namespace {

const QString kHost = QStringLiteral("git.example.test");
const QByteArray kSecret = "s3cret-token-value";

GateSecret secretOf(const QString &presentation)
{
    QString error;
    std::optional<GateSecret> secret = GateSecret::withPresentation(presentation, &error);
    Q_ASSERT(secret);
    secret->name = QStringLiteral("deploy");
    secret->value = kSecret;
    secret->hosts = {kHost};
    return *secret;
}

// A client context that trusts exactly `pem`.
SSL_CTX *clientTrusting(const QByteArray &pem)
{
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    BIO *bio = BIO_new_mem_buf(pem.constData(), int(pem.size()));
    X509 *certificate = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(context), certificate);
    X509_free(certificate);
    BIO_free(bio);
    return context;
}

// The job, the tunnel and the server, with the bytes each side wrote moved until none move.
struct Exchange
{
    TlsEngine &job;
    SecretTunnel &tunnel;
    TlsEngine &server;
    QByteArray serverReceived;
    QByteArray jobReceived;

    void settle(const QByteArray &serverAnswer = {})
    {
        bool answered = serverAnswer.isEmpty();
        for (int round = 0; round < 50; ++round) {
            bool moved = false;
            if (const QByteArray bytes = job.takeCipher(); !bytes.isEmpty()) {
                tunnel.fromClient(bytes);
                moved = true;
            }
            if (const QByteArray bytes = tunnel.takeForUpstream(); !bytes.isEmpty()) {
                server.feed(bytes);
                moved = true;
            }
            serverReceived += server.takePlain();
            if (!answered && serverReceived.contains("\r\n\r\n")) {
                server.send(serverAnswer);
                server.close();
                answered = true;
            }
            if (const QByteArray bytes = server.takeCipher(); !bytes.isEmpty()) {
                tunnel.fromUpstream(bytes);
                moved = true;
            }
            if (const QByteArray bytes = tunnel.takeForClient(); !bytes.isEmpty()) {
                job.feed(bytes);
                moved = true;
            }
            jobReceived += job.takePlain();
            if (!moved)
                return;
        }
    }
};

} // namespace

class TestSecretTunnel : public QObject
{
    Q_OBJECT

    std::unique_ptr<GateAuthority> m_gate; // the daemon's
    std::unique_ptr<GateAuthority> m_upstream; // stands for the server's public PKI
    QTemporaryFile m_upstreamRoots;
    SSL_CTX *m_jobContext = nullptr;

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        m_upstream = GateAuthority::create({}, &error);
        QVERIFY2(m_upstream, qPrintable(error));
        QVERIFY(m_upstreamRoots.open());
        m_upstreamRoots.write(m_upstream->certificatePem());
        m_upstreamRoots.flush();
        m_gate = GateAuthority::create(m_upstreamRoots.fileName(), &error);
        QVERIFY2(m_gate, qPrintable(error));
        m_jobContext = clientTrusting(m_gate->certificatePem());
    }

    void cleanupTestCase() { SSL_CTX_free(m_jobContext); }

    void theSecretGoesInsideTheGatesVerifiedTls_data()
    {
        QTest::addColumn<QString>("presentation");
        QTest::addColumn<QByteArray>("expected");
        // The job's own value of the field the secret takes: it must not reach the server.
        QTest::addColumn<QByteArray>("dropped");
        QTest::newRow("bearer") << "bearer"
                                << QByteArray("\r\nAuthorization: Bearer " + kSecret + "\r\n")
                                << QByteArray("Authorization: Bearer job-made-up");
        QTest::newRow("basic") << "basic"
                               << QByteArray("\r\nAuthorization: Basic " + kSecret.toBase64()
                                             + "\r\n")
                               << QByteArray("Authorization: Bearer job-made-up");
        QTest::newRow("header") << "header X-Api-Key"
                                << QByteArray("\r\nX-Api-Key: " + kSecret + "\r\n")
                                << QByteArray("X-Api-Key: job-made-up");
        QTest::newRow("query") << "query key"
                               << QByteArray("GET /repo/info?a=1&key=" + kSecret + " HTTP/1.1\r\n")
                               << QByteArray("GET /repo/info?a=1 ");
    }

    void theSecretGoesInsideTheGatesVerifiedTls()
    {
        QFETCH(QString, presentation);
        QFETCH(QByteArray, expected);
        QFETCH(QByteArray, dropped);
        const GateSecret secret = secretOf(presentation);
        QString error;
        SecretTunnel tunnel(secret, m_gate->serverContextFor(kHost, &error),
                            m_gate->upstreamContext(), kHost, 443);
        TlsEngine job(m_jobContext, TlsEngine::Role::Client, kHost.toStdString());
        TlsEngine server(m_upstream->serverContextFor(kHost, &error), TlsEngine::Role::Server);
        Exchange exchange{job, tunnel, server, {}, {}};
        job.send("GET /repo/info?a=1 HTTP/1.1\r\nHost: git.example.test\r\nAuthorization: Bearer "
                 "job-made-up\r\nConnection: keep-alive\r\nX-Api-Key: job-made-up\r\n\r\n");
        exchange.settle("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");

        QVERIFY2(job.isEstablished(), qPrintable(job.error()));
        QVERIFY2(tunnel.presented(), qPrintable(tunnel.problem()));
        QVERIFY2(exchange.serverReceived.contains(expected), exchange.serverReceived.constData());
        QVERIFY(!exchange.serverReceived.contains(dropped));
        QVERIFY(exchange.serverReceived.contains("\r\nConnection: close\r\n"));
        QVERIFY(!exchange.serverReceived.contains("keep-alive"));
        QVERIFY(exchange.jobReceived.endsWith("hello"));
        QVERIFY(!exchange.jobReceived.contains(kSecret));
        QVERIFY(tunnel.problem().isEmpty());
    }

    void aRequestForAnotherHostIsNotGivenTheSecret()
    {
        const GateSecret secret = secretOf(QStringLiteral("bearer"));
        QString error;
        SecretTunnel tunnel(secret, m_gate->serverContextFor(kHost, &error),
                            m_gate->upstreamContext(), kHost, 443);
        TlsEngine job(m_jobContext, TlsEngine::Role::Client, kHost.toStdString());
        TlsEngine server(m_upstream->serverContextFor(kHost, &error), TlsEngine::Role::Server);
        Exchange exchange{job, tunnel, server, {}, {}};
        job.send("GET / HTTP/1.1\r\nHost: attacker.example\r\n\r\n");
        exchange.settle();
        QVERIFY(exchange.jobReceived.startsWith("HTTP/1.1 403"));
        QVERIFY(exchange.jobReceived.contains("Host header"));
        QVERIFY(exchange.serverReceived.isEmpty());
        QVERIFY(!tunnel.presented());
        QVERIFY(tunnel.isDone());
        QVERIFY(tunnel.problem().contains(u"secret 'deploy' was not sent"));
    }

    void aServerTheGateDoesNotTrustGetsNothing()
    {
        const GateSecret secret = secretOf(QStringLiteral("bearer"));
        QString error;
        // A gate without the test's roots: the server's certificate is not trusted.
        const std::unique_ptr<GateAuthority> plainGate = GateAuthority::create({}, &error);
        SSL_CTX *jobContext = clientTrusting(plainGate->certificatePem());
        {
            SecretTunnel tunnel(secret, plainGate->serverContextFor(kHost, &error),
                                plainGate->upstreamContext(), kHost, 443);
            TlsEngine job(jobContext, TlsEngine::Role::Client, kHost.toStdString());
            TlsEngine server(m_upstream->serverContextFor(kHost, &error), TlsEngine::Role::Server);
            Exchange exchange{job, tunnel, server, {}, {}};
            job.send("GET / HTTP/1.1\r\nHost: git.example.test\r\n\r\n");
            exchange.settle();
            QVERIFY(exchange.jobReceived.startsWith("HTTP/1.1 502"));
            QVERIFY2(tunnel.problem().contains(u"certificate"), qPrintable(tunnel.problem()));
            QVERIFY(exchange.serverReceived.isEmpty());
            QVERIFY(!tunnel.presented());
        }
        SSL_CTX_free(jobContext);
    }

    void aServerNamedOtherwiseGetsNothing()
    {
        const GateSecret secret = secretOf(QStringLiteral("bearer"));
        QString error;
        SecretTunnel tunnel(secret, m_gate->serverContextFor(kHost, &error),
                            m_gate->upstreamContext(), kHost, 443);
        TlsEngine job(m_jobContext, TlsEngine::Role::Client, kHost.toStdString());
        // A trusted certificate, for another name (a server answering for the address).
        TlsEngine server(m_upstream->serverContextFor(QStringLiteral("other.example.test"), &error),
                         TlsEngine::Role::Server);
        Exchange exchange{job, tunnel, server, {}, {}};
        job.send("GET / HTTP/1.1\r\nHost: git.example.test\r\n\r\n");
        exchange.settle();
        QVERIFY(exchange.jobReceived.startsWith("HTTP/1.1 502"));
        QVERIFY(exchange.serverReceived.isEmpty());
        QVERIFY(!tunnel.presented());
    }

    void aJobThatDoesNotTrustTheGateEndsTheExchange()
    {
        const GateSecret secret = secretOf(QStringLiteral("bearer"));
        QString error;
        SecretTunnel tunnel(secret, m_gate->serverContextFor(kHost, &error),
                            m_gate->upstreamContext(), kHost, 443);
        SSL_CTX *trustsNothing = SSL_CTX_new(TLS_client_method());
        {
            TlsEngine job(trustsNothing, TlsEngine::Role::Client, kHost.toStdString());
            TlsEngine server(m_upstream->serverContextFor(kHost, &error), TlsEngine::Role::Server);
            Exchange exchange{job, tunnel, server, {}, {}};
            job.send("GET / HTTP/1.1\r\nHost: git.example.test\r\n\r\n");
            exchange.settle();
            QVERIFY(job.hasFailed());
            QVERIFY(tunnel.isDone());
            QVERIFY(!tunnel.presented());
            QVERIFY(exchange.serverReceived.isEmpty());
        }
        SSL_CTX_free(trustsNothing);
    }

    void presentSecretRefusesAmbiguousRequests_data()
    {
        QTest::addColumn<QByteArray>("head");
        QTest::addColumn<QString>("refusal");
        QTest::newRow("two hosts") << QByteArray(
                "GET / HTTP/1.1\r\nHost: git.example.test\r\nHost: git.example.test\r\n\r\n")
                                   << "exactly one Host";
        QTest::newRow("no host") << QByteArray("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n")
                                 << "exactly one Host";
        QTest::newRow("smuggling")
                << QByteArray("POST / HTTP/1.1\r\nHost: git.example.test\r\nContent-Length: 3\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n")
                << "both Content-Length";
        QTest::newRow("absolute form")
                << QByteArray("GET http://x/ HTTP/1.1\r\nHost: git.example.test\r\n\r\n")
                << "not an HTTP/1.1 request";
        QTest::newRow("folded header")
                << QByteArray("GET / HTTP/1.1\r\nHost: git.example.test\r\n x\r\n\r\n")
                << "malformed";
        QTest::newRow("other port")
                << QByteArray("GET / HTTP/1.1\r\nHost: git.example.test:8443\r\n\r\n")
                << "Host header";
    }

    void presentSecretRefusesAmbiguousRequests()
    {
        QFETCH(QByteArray, head);
        QFETCH(QString, refusal);
        const PresentedRequest request =
                presentSecret(secretOf(QStringLiteral("bearer")), head, kHost, 443);
        QVERIFY2(request.refusal.contains(refusal), qPrintable(request.refusal));
        QVERIFY(request.head.isEmpty());
    }

    void presentationsAreReadOrRefused()
    {
        QString error;
        QVERIFY(GateSecret::withPresentation(QStringLiteral("header X-Token"), &error));
        QVERIFY(!GateSecret::withPresentation(QStringLiteral("header Connection"), &error));
        QVERIFY(error.contains(u"hop-by-hop"));
        QVERIFY(!GateSecret::withPresentation(QStringLiteral("cookie x"), &error));
        QVERIFY(error.contains(u"bearer, basic, header <name> or query <name>"));
        QVERIFY(!GateSecret::withPresentation(QStringLiteral("header bad:name"), &error));
        const GateSecret secret = secretOf(QStringLiteral("bearer"));
        QVERIFY(secret.boundTo(kHost, 443));
        QVERIFY(!secret.boundTo(kHost, 8443));
        QVERIFY(!secret.boundTo(QStringLiteral("example.test"), 443));
    }
};

QTEST_GUILESS_MAIN(TestSecretTunnel)
#include "tst_secrettunnel.moc"
