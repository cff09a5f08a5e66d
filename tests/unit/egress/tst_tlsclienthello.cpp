// The egress proxy's ClientHello scanner: the hellos real clients send (captured from OpenSSL,
// Python and the browser worker's Chromium), hellos cut into segments and records, and every
// field made wrong in turn. A tunnel's first bytes come from the job or the page, so nothing
// here may be trusted.

#include "egress/tls/TlsClientHello.h"
#include "TlsHelloBuilder.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace cmcp;
using namespace cmcp::test;
using Verdict = tls::HelloScan::Verdict;

namespace {

tls::HelloScan scan(const QByteArray &bytes)
{
    return tls::scanClientHello(std::string_view(bytes.constData(), bytes.size()));
}

QByteArray captured(const char *name)
{
    QFile file(QStringLiteral(CMCP_HELLO_CORPUS "/%1.bin").arg(QLatin1String(name)));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    return file.readAll();
}

} // namespace

class TestTlsClientHello : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void realClientsHellos_data()
    {
        QTest::addColumn<QByteArray>("hello");
        QTest::addColumn<QString>("name");
        QTest::newRow("openssl s_client -servername example.com (TLS 1.3)")
                << captured("openssl-sni-example.com") << QStringLiteral("example.com");
        QTest::newRow("openssl s_client -tls1_2 -servername pypi.org")
                << captured("openssl-tls12-sni") << QStringLiteral("pypi.org");
        QTest::newRow("python ssl, files.pythonhosted.org")
                << captured("python-sni-files.pythonhosted.org")
                << QStringLiteral("files.pythonhosted.org");
        // QtWebEngine 6.4's Chromium 102 (BoringSSL, GREASE values), as cmcp-browser sends it.
        QTest::newRow("chromium 102, chromium-sni.example")
                << captured("chromium-102-sni-chromium-sni.example")
                << QStringLiteral("chromium-sni.example");
        QTest::newRow("openssl s_client -noservername") << captured("openssl-no-sni") << QString();
    }

    void realClientsHellos()
    {
        QFETCH(QByteArray, hello);
        QFETCH(QString, name);
        const tls::HelloScan result = scan(hello);
        QCOMPARE(int(result.verdict), int(Verdict::Hello));
        QCOMPARE(result.helloBytes, std::size_t(hello.size()));
        if (name.isEmpty())
            QVERIFY(!result.serverName);
        else
            QCOMPARE(QString::fromStdString(result.serverName.value_or("(none)")), name);
    }

    // However the client's writes are cut into segments, the hello is judged once it is whole,
    // and every shorter cut asks for the bytes the next step needs, never more than the bound.
    void aHelloSplitIntoSegmentsIsJudgedWhenWhole()
    {
        const QByteArray hello = captured("python-sni-files.pythonhosted.org") + "after";
        for (qsizetype cut = 1; cut < hello.size() - 5; ++cut) {
            const tls::HelloScan part = scan(hello.left(cut));
            QCOMPARE(int(part.verdict), int(Verdict::NeedMore));
            QVERIFY(part.helloBytes > std::size_t(cut));
            QVERIFY(part.helloBytes <= std::size_t(hello.size() - 5));
        }
        const tls::HelloScan whole = scan(hello);
        QCOMPARE(int(whole.verdict), int(Verdict::Hello));
        QCOMPARE(whole.helloBytes, std::size_t(hello.size() - 5)); // "after" is not the hello's
        QCOMPARE(whole.serverName.value_or(""), std::string("files.pythonhosted.org"));
    }

    // A hello cut into many records (as a filter-evading client does) is gathered whole: the
    // name in the third record is the one judged.
    void aHelloSplitIntoRecordsIsGathered()
    {
        const QByteArray message = handshake(helloBody({serverNameExtension("evil.test")}));
        const QByteArray hello = records(message, 40);
        QVERIFY(hello.count("\x16\x03\x01") >= 3);
        const tls::HelloScan result = scan(hello);
        QCOMPARE(int(result.verdict), int(Verdict::Hello));
        QCOMPARE(result.serverName.value_or(""), std::string("evil.test"));
    }

    void withoutAName()
    {
        const tls::HelloScan noServerName =
                scan(records(handshake(helloBody({extension(43, "\x02\x03\x04")}))));
        QCOMPARE(int(noServerName.verdict), int(Verdict::Hello));
        QVERIFY(!noServerName.serverName);
        const tls::HelloScan noExtensions = scan(records(handshake(helloBody({}, false))));
        QCOMPARE(int(noExtensions.verdict), int(Verdict::Hello));
        QVERIFY(!noExtensions.serverName);
    }

    void plainProtocolsAreNotTls_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("http") << QByteArray("GET / HTTP/1.1\r\n");
        QTest::newRow("ssh") << QByteArray("SSH-2.0-OpenSSH_9.2\r\n");
        QTest::newRow("git") << QByteArray("0032git-upload-pack /x");
        QTest::newRow("byte 23, then not 3") << QByteArray("\x17\x01\x02", 3);
    }

    void plainProtocolsAreNotTls()
    {
        QFETCH(QByteArray, bytes);
        QCOMPARE(int(scan(bytes).verdict), int(Verdict::NotTls));
    }

    void malformedHellosAreRefused_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("problem");
        const QByteArray good = handshake(helloBody({serverNameExtension("site.test")}));

        QTest::newRow("application data first") << QByteArray("\x17\x03\x03\x00\x05hello", 10)
                                                << "first TLS record is application_data";
        QTest::newRow("alert first") << QByteArray("\x15\x03\x03\x00\x02\x01\x00", 7) << "alert";
        QTest::newRow("handshake record of version 2.x")
                << QByteArray("\x16\x02\x00\x00\x04", 5) << "version 2.x";
        QTest::newRow("empty handshake record")
                << QByteArray("\x16\x03\x01\x00\x00", 5) << "empty handshake record";
        QTest::newRow("record longer than TLS allows")
                << QByteArray("\x16\x03\x01\x40\x01", 5) << "more than TLS allows";
        QTest::newRow("not a ClientHello")
                << records(handshake(helloBody({}), 2)) << "type 2, not a ClientHello";
        QTest::newRow("hello cut by an alert")
                << records(good.left(20)) + QByteArray("\x15\x03\x03\x00\x02\x01\x00", 7)
                << "cut by a record of type alert";
        QTest::newRow("bytes after the hello in its record")
                << records(good + "x") << "bytes after the ClientHello";
        QTest::newRow("hello of version 2.x")
                << records(handshake(QByteArray("\x02\x00", 2) + helloBody({}).mid(2)))
                << "version 2.x";
        QTest::newRow("session id of 33 bytes")
                << records(handshake(helloBody({}).left(34) + char(33) + QByteArray(40, 0)))
                << "session id";
        QByteArray oddSuites = helloBody({});
        oddSuites[2 + 32 + 1 + 32 + 1] = 3;
        QTest::newRow("odd cipher suites length")
                << records(handshake(oddSuites)) << "cipher suites";
        QTest::newRow("extensions length too long")
                << records(handshake(helloBody({}, false) + bigEndian(10, 2) + "abcd"))
                << "extensions length";
        QTest::newRow("extension runs past the hello") << records(handshake(
                helloBody({}, false) + bigEndian(4, 2) + bigEndian(0, 2) + bigEndian(9, 2)))
                                                       << "runs past the hello";
        QTest::newRow("two server_name extensions") << records(handshake(
                helloBody({serverNameExtension("site.test"), serverNameExtension("evil.test")})))
                                                    << "extension 0 twice";
        QTest::newRow("several host names") << records(
                handshake(helloBody({serverNameExtension({{0, "site.test"}, {0, "evil.test"}})})))
                                            << "several host names";
        QTest::newRow("a name of another type")
                << records(handshake(helloBody({serverNameExtension({{1, "site.test"}})})))
                << "type 1";
        QTest::newRow("empty server_name extension")
                << records(handshake(helloBody({extension(0, {})}))) << "wrong list length";
        QTest::newRow("list length wrong") << records(handshake(
                helloBody({extension(0, bigEndian(20, 2) + char(0) + bigEndian(3, 2) + "abc")})))
                                           << "wrong list length";
        QTest::newRow("name runs past the list") << records(handshake(
                helloBody({extension(0, bigEndian(6, 2) + char(0) + bigEndian(9, 2) + "abc")})))
                                                 << "runs past the list";
        QTest::newRow("empty name")
                << records(handshake(helloBody({serverNameExtension("")}))) << "0 bytes long";
        QTest::newRow("NUL in the name") << records(
                handshake(helloBody({serverNameExtension(QByteArray("site.test\0.evil", 15))})))
                                         << "not printable ASCII";
        QTest::newRow("encrypted ClientHello") << records(handshake(
                helloBody({serverNameExtension("site.test"), extension(0xfe0d, "opaque")})))
                                               << "ECH";
        QTest::newRow("declared larger than the bound")
                << QByteArray("\x16\x03\x01\x40\x00\x01\x00\x50\x00", 9) << "more than the 16389";
        QTest::newRow("larger than the bound in many records")
                << records(handshake(helloBody({extension(21, QByteArray(16000, 0))})), 100)
                << "larger than 16389 bytes";
    }

    void malformedHellosAreRefused()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, problem);
        const tls::HelloScan result = scan(bytes);
        QCOMPARE(int(result.verdict), int(Verdict::Refused));
        QVERIFY2(QString::fromStdString(result.problem).contains(problem), result.problem.c_str());
        QVERIFY(!result.serverName);
    }

    void theNameMustBeTheGrantedHost()
    {
        const auto mismatch = [](const char *name, const char *host, bool address = false) {
            return tls::serverNameMismatch(name ? std::optional<std::string>(name) : std::nullopt,
                                           host, address);
        };
        QVERIFY(mismatch("pypi.org", "pypi.org").empty());
        QVERIFY(mismatch("PyPI.Org", "pypi.org").empty());
        QVERIFY(mismatch("pypi.org.", "pypi.org").empty());
        QVERIFY(mismatch(nullptr, "pypi.org").empty());
        QCOMPARE(mismatch("evil.test", "pypi.org"),
                 std::string("the tunnel was granted for pypi.org, but its TLS ClientHello names "
                             "'evil.test'"));
        QVERIFY(!mismatch("pypi.org..", "pypi.org").empty());
        QVERIFY(!mismatch("files.pypi.org", "pypi.org").empty());
        QVERIFY(!mismatch("pypi.org.evil.test", "pypi.org").empty());
        // An address: no name, or that address; any name would front another site.
        QVERIFY(mismatch(nullptr, "93.184.216.34", true).empty());
        QVERIFY(mismatch("93.184.216.34", "93.184.216.34", true).empty());
        QVERIFY(mismatch("example.com", "93.184.216.34", true).find("address")
                != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestTlsClientHello)
#include "tst_tlsclienthello.moc"
