// The egress gate's rules under attack: every notation of a non-public address, schemes that
// are not the web, host names that only look allowed, and names that resolve (or rebind) to
// refused addresses. Each refusal must name the rule that refused it.

#include "egress/AddressRanges.h"
#include "egress/EgressGate.h"
#include "egress/EgressPolicy.h"
#include "support/FakeResolver.h"

#include <QSignalSpy>
#include <QTest>

using namespace cmcp;

namespace {

EgressPolicy policy(const QStringList &domains, bool allowPrivate = false,
                    const QList<QUrl> &trusted = {})
{
    QString error;
    std::optional<EgressPolicy> made =
            EgressPolicy::create({domains, allowPrivate, trusted}, &error);
    if (!made)
        qFatal("policy: %s", qPrintable(error));
    return *made;
}

QString refusalOf(const EgressPolicy &rules, const QString &url)
{
    return rules.checkUrl(QUrl(url)).refusal;
}

} // namespace

class TestEgressPolicy : public QObject
{
    Q_OBJECT

    // Decides through a gate and waits for the (always later) answer.
    static EgressDecision decide(const EgressGate &gate, const QString &url)
    {
        QObject context;
        std::optional<EgressDecision> decision;
        gate.decide(QUrl(url), &context, [&](const EgressDecision &d) { decision = d; });
        if (decision)
            qFatal("the gate answered before returning");
        (void)QTest::qWaitFor([&] { return decision.has_value(); }, 5000);
        return decision.value_or(EgressDecision{QStringLiteral("no answer"), {}, {}});
    }

private Q_SLOTS:
    void nonPublicAddressesAreRefusedInEveryNotation_data()
    {
        QTest::addColumn<QString>("url");
        const char *urls[] = {
                "http://127.0.0.1/",
                "http://127.255.255.254:8080/x",
                "http://2130706433/", // decimal
                "http://0x7f000001/", // hexadecimal
                "http://0x7f.0.0.1/", // hexadecimal part
                "http://0177.0.0.1/", // octal part
                "http://017700000001/", // octal
                "http://127.1/", // short form
                "http://%31%32%37.0.0.1/", // percent-encoded
                "http://127.0.0.1./", // trailing dot
                "http://user:pass@127.0.0.1/",
                "http://example.com@127.0.0.1/",
                "http://[::1]/",
                "http://[0:0:0:0:0:0:0:1]/",
                "http://[::ffff:127.0.0.1]/", // IPv4-mapped
                "http://[::ffff:7f00:1]/",
                "http://[::127.0.0.1]/", // IPv4-compatible
                "http://[64:ff9b::a9fe:a9fe]/", // NAT64 of 169.254.169.254
                "http://[2002:7f00:1::]/", // 6to4 of 127.0.0.1
                "http://0.0.0.0/",
                "http://0/",
                "http://[::]/",
                "http://10.1.2.3/",
                "http://172.16.0.1/",
                "http://172.31.255.255/",
                "http://192.168.1.1/",
                "http://169.254.169.254/latest/meta-data/", // AWS, GCP, Azure metadata
                "http://100.100.100.200/", // Alibaba metadata (shared address space)
                "http://[fd00:ec2::254]/", // AWS metadata over IPv6
                "http://[fe80::1]/",
                "http://[fc00::1]/",
                "http://[fec0::1]/",
                "http://224.0.0.1/",
                "http://[ff02::1]/",
                "http://255.255.255.255/",
                "http://240.0.0.1/",
                "http://192.0.2.1/",
                "https://198.18.0.1/",
        };
        for (const char *url : urls)
            QTest::newRow(url) << QString::fromLatin1(url);
    }

    void nonPublicAddressesAreRefusedInEveryNotation()
    {
        QFETCH(QString, url);
        const QString refusal = refusalOf(policy({QStringLiteral("*")}), url);
        QVERIFY2(refusal.startsWith(QLatin1String("refused (WEB_ALLOW_PRIVATE): ")),
                 qPrintable(refusal));
        QVERIFY2(refusal.contains(QLatin1String("set WEB_ALLOW_PRIVATE=true")),
                 qPrintable(refusal));
        // With private addresses allowed, the same URL passes.
        QCOMPARE(refusalOf(policy({QStringLiteral("*")}, true), url), QString());
    }

    void refusalsSayWhatTheAddressIs()
    {
        const EgressPolicy rules = policy({QStringLiteral("*")});
        QVERIFY(refusalOf(rules, QStringLiteral("http://0x7f000001/"))
                        .contains(QLatin1String(
                                "127.0.0.1 is a non-public address (127.0.0.0/8, loopback)")));
        QVERIFY(refusalOf(rules, QStringLiteral("http://169.254.169.254/"))
                        .contains(QLatin1String("cloud metadata")));
        QVERIFY(refusalOf(rules, QStringLiteral("http://[::ffff:10.0.0.1]/"))
                        .contains(QLatin1String("10.0.0.0/8, private, as 10.0.0.1 carried in an "
                                                "IPv4-mapped IPv6 address")));
    }

    void publicAddressesPass_data()
    {
        QTest::addColumn<QString>("url");
        for (const char *url :
             {"http://8.8.8.8/", "https://1.1.1.1:8443/a?b#c", "http://172.32.0.1/",
              "http://100.128.0.1/", "http://[2606:4700:4700::1111]/", "http://[::ffff:8.8.8.8]/",
              "http://134744072/", "http://example.com/"})
            QTest::newRow(url) << QString::fromLatin1(url);
    }

    void publicAddressesPass()
    {
        QFETCH(QString, url);
        QCOMPARE(refusalOf(policy({QStringLiteral("*")}), url), QString());
    }

    void onlyHttpAndHttps_data()
    {
        QTest::addColumn<QString>("url");
        for (const char *url : {"file:///etc/passwd", "ftp://example.com/", "gopher://example.com/",
                                "javascript:alert(1)", "data:text/html,hi", "ws://example.com/",
                                "chrome://settings", "dict://example.com:11211/"})
            QTest::newRow(url) << QString::fromLatin1(url);
    }

    void onlyHttpAndHttps()
    {
        QFETCH(QString, url);
        const QString refusal = refusalOf(policy({QStringLiteral("*")}, true), url);
        QVERIFY2(refusal.startsWith(QLatin1String("refused (scheme): ")), qPrintable(refusal));
    }

    void malformedUrlsAreRefused()
    {
        const EgressPolicy rules = policy({QStringLiteral("*")}, true);
        for (const char *url :
             {"http:/x.com/", "http://", "http://a b/", "http://[::1/", "http://[fe80::1%25eth0]/",
              "https://example.com:99999/", "not a url"})
            QVERIFY2(!refusalOf(rules, QLatin1String(url)).isEmpty(), url);
    }

    void domainList_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<bool>("allowed");
        const QList<QPair<const char *, bool>> cases = {
                {"http://example.com/", true},
                {"https://EXAMPLE.com/path", true},
                {"http://example.com./", true},
                {"http://example.com:8080/", true}, // an entry without a port allows any
                {"http://www.example.com/", false}, // exact means exact
                {"http://example.com.evil.net/", false},
                {"http://evil-example.com/", false},
                {"http://evilexample.com/", false},
                {"http://example.com@evil.net/", false},
                {"http://evil.net/?example.com", false},
                {"http://evil.net/#@example.com", false},
                {"http://a.example.org/", true},
                {"http://a.b.example.org/", true},
                {"http://example.org/", false}, // *.example.org: subdomains only
                {"http://xexample.org/", false},
                {"https://api.test:8443/v1", true},
                {"http://api.test:8443/v1", true},
                {"https://api.test/v1", false}, // only on port 8443
                {"http://bücher.de/", true},
                {"http://xn--bcher-kva.de/", true},
                {"http://BÜCHER.de/", true},
                {"http://buecher.de/", false},
                {"http://8.8.8.8/", true},
                {"http://134744072/", true}, // 8.8.8.8 in decimal is the same host
                {"http://8.8.4.4/", false},
                {"http://127.0.0.1/", false},
        };
        for (const auto &[url, allowed] : cases)
            QTest::newRow(url) << QString::fromUtf8(url) << allowed;
    }

    void domainList()
    {
        QFETCH(QString, url);
        QFETCH(bool, allowed);
        const EgressPolicy rules =
                policy({QStringLiteral("example.com"), QStringLiteral("*.Example.ORG"),
                        QStringLiteral("api.test:8443"), QStringLiteral("Bücher.de"),
                        QStringLiteral("8.8.8.8")});
        const QString refusal = refusalOf(rules, url);
        if (allowed) {
            QCOMPARE(refusal, QString());
        } else {
            QVERIFY2(refusal.startsWith(QLatin1String("refused (WEB_ALLOWED_DOMAINS): ")),
                     qPrintable(refusal));
            QVERIFY2(refusal.contains(QLatin1String("allowed: example.com, *.Example.ORG")),
                     qPrintable(refusal));
        }
    }

    void anEmptyListAllowsNothing()
    {
        const QString refusal = refusalOf(policy({}), QStringLiteral("http://example.com/"));
        QVERIFY2(refusal.contains(QLatin1String("(allowed: none)")), qPrintable(refusal));
    }

    void unreadableDomainEntriesStopStartUp_data()
    {
        QTest::addColumn<QString>("entry");
        for (const char *entry :
             {"http://example.com", "example.com/path", "exa mple.com", "*.", "example.com:0",
              "example.com:99999", "example.com:http", "*.8.8.8.8", "a..b", "[::1"})
            QTest::newRow(entry) << QString::fromLatin1(entry);
    }

    void unreadableDomainEntriesStopStartUp()
    {
        QFETCH(QString, entry);
        QString error;
        QVERIFY(!EgressPolicy::create({{entry}, false, {}}, &error));
        QVERIFY2(error.startsWith(QLatin1String("WEB_ALLOWED_DOMAINS: '") + entry),
                 qPrintable(error));
    }

    void aListedPrivateAddressIsStillPrivate()
    {
        // The domain list says which names; WEB_ALLOW_PRIVATE alone opens non-public addresses.
        const EgressPolicy rules =
                policy({QStringLiteral("127.0.0.1"), QStringLiteral("[::1]:9000")});
        QVERIFY(refusalOf(rules, QStringLiteral("http://127.0.0.1/"))
                        .startsWith(QLatin1String("refused (WEB_ALLOW_PRIVATE)")));
        QVERIFY(refusalOf(rules, QStringLiteral("http://[::1]:9000/"))
                        .startsWith(QLatin1String("refused (WEB_ALLOW_PRIVATE)")));
        const EgressPolicy open =
                policy({QStringLiteral("127.0.0.1"), QStringLiteral("[::1]:9000")}, true);
        QCOMPARE(refusalOf(open, QStringLiteral("http://127.0.0.1:5/")), QString());
        QCOMPARE(refusalOf(open, QStringLiteral("http://[::1]:9000/")), QString());
        QVERIFY(refusalOf(open, QStringLiteral("http://[::1]:9001/"))
                        .startsWith(QLatin1String("refused (WEB_ALLOWED_DOMAINS)")));
        QVERIFY(refusalOf(open, QStringLiteral("http://127.0.0.2/"))
                        .startsWith(QLatin1String("refused (WEB_ALLOWED_DOMAINS)")));
    }

    void trustedOriginsAreExactOrigins()
    {
        EgressPolicy::Options options{{QStringLiteral("example.com")},
                                      false,
                                      {QUrl(QStringLiteral("http://127.0.0.1:8888/searx/"))}};
        QString error;
        // Trusted past the domain list, but not past the private-address rule by default.
        const std::optional<EgressPolicy> strict = EgressPolicy::create(options, &error);
        QVERIFY(strict);
        QVERIFY(refusalOf(*strict, QStringLiteral("http://127.0.0.1:8888/search?q=x"))
                        .startsWith(QLatin1String("refused (WEB_SEARCH_ALLOW_PRIVATE)")));
        options.trustedMayBePrivate = true;
        const EgressPolicy rules = *EgressPolicy::create(options, &error);
        QCOMPARE(refusalOf(rules, QStringLiteral("http://127.0.0.1:8888/search?q=x")), QString());
        QVERIFY(!refusalOf(rules, QStringLiteral("http://127.0.0.1:8889/")).isEmpty());
        QVERIFY(!refusalOf(rules, QStringLiteral("https://127.0.0.1:8888/")).isEmpty());
        QVERIFY(!refusalOf(rules, QStringLiteral("http://127.0.0.2:8888/")).isEmpty());
        QCOMPARE(rules.trustedOrigins(), QStringList{QStringLiteral("http://127.0.0.1:8888")});
    }

    void addressClassesOfResolvedNames()
    {
        QCOMPARE(classifyAddress(QHostAddress(QStringLiteral("93.184.216.34"))).isPublic, true);
        QCOMPARE(classifyAddress(QHostAddress(QStringLiteral("2001:db8::1"))).isPublic, false);
        QCOMPARE(classifyAddress(QHostAddress(QStringLiteral("::ffff:192.168.0.1"))).isPublic,
                 false);
        QCOMPARE(classifyAddress(QHostAddress(QStringLiteral("2002:0808:0808::1"))).isPublic, true);
    }

    void aNameResolvingToAPrivateAddressIsRefused()
    {
        auto resolver = std::make_shared<FakeResolver>();
        resolver->answer(QStringLiteral("intranet.example"),
                         {{QHostAddress(QStringLiteral("10.0.0.7"))}});
        const EgressGate gate(policy({QStringLiteral("*")}), resolver);
        const EgressDecision decision = decide(gate, QStringLiteral("http://intranet.example/"));
        QVERIFY(!decision.allowed());
        QVERIFY2(decision.refusal.startsWith(
                         QLatin1String("refused (WEB_ALLOW_PRIVATE): intranet.example resolves to "
                                       "10.0.0.7, a non-public address (10.0.0.0/8, private)")),
                 qPrintable(decision.refusal));
    }

    void aMixedAnswerIsRefusedAsAWhole()
    {
        // One public and one private address: a client that tried them in turn would reach the
        // private one, so the name is refused.
        auto resolver = std::make_shared<FakeResolver>();
        resolver->answer(QStringLiteral("mixed.example"),
                         {{QHostAddress(QStringLiteral("93.184.216.34")),
                           QHostAddress(QStringLiteral("127.0.0.1"))}});
        const EgressGate gate(policy({QStringLiteral("*")}), resolver);
        const EgressDecision decision = decide(gate, QStringLiteral("https://mixed.example/"));
        QVERIFY(!decision.allowed());
        QVERIFY(decision.refusal.contains(QLatin1String("resolves to 127.0.0.1")));
    }

    void aRebindingNameIsResolvedOncePerDecision()
    {
        // First answer public, every later one loopback: the decision holds the first answer
        // only, and the connection goes there (tst_webfetcher shows the connection side).
        auto resolver = std::make_shared<FakeResolver>();
        resolver->answer(QStringLiteral("rebind.example"),
                         {{QHostAddress(QStringLiteral("93.184.216.34"))},
                          {QHostAddress(QStringLiteral("127.0.0.1"))}});
        const EgressGate gate(policy({QStringLiteral("*")}), resolver);
        const EgressDecision first = decide(gate, QStringLiteral("http://rebind.example/"));
        QVERIFY(first.allowed());
        QCOMPARE(first.addresses,
                 QList<QHostAddress>{QHostAddress(QStringLiteral("93.184.216.34"))});
        QCOMPARE(resolver->lookups(QStringLiteral("rebind.example")), 1);
        const EgressDecision second = decide(gate, QStringLiteral("http://rebind.example/"));
        QVERIFY(!second.allowed());
        QVERIFY(second.refusal.contains(QLatin1String("resolves to 127.0.0.1")));
        QCOMPARE(resolver->lookups(QStringLiteral("rebind.example")), 2);
    }

    void addressesAreIpv4FirstAndLiteralsAreNotResolved()
    {
        auto resolver = std::make_shared<FakeResolver>();
        resolver->answer(QStringLiteral("dual.example"),
                         {{QHostAddress(QStringLiteral("2606:4700::1")),
                           QHostAddress(QStringLiteral("93.184.216.34"))}});
        const EgressGate gate(policy({QStringLiteral("*")}), resolver);
        const EgressDecision dual = decide(gate, QStringLiteral("http://dual.example/"));
        QCOMPARE(dual.addresses.value(0), QHostAddress(QStringLiteral("93.184.216.34")));
        const EgressDecision literal = decide(gate, QStringLiteral("http://8.8.8.8/"));
        QVERIFY(literal.allowed());
        QCOMPARE(literal.addresses, QList<QHostAddress>{QHostAddress(QStringLiteral("8.8.8.8"))});
        QCOMPARE(resolver->lookups(QStringLiteral("8.8.8.8")), 0);
    }

    void unresolvableNamesFail()
    {
        const EgressGate gate(policy({QStringLiteral("*")}), std::make_shared<FakeResolver>());
        const EgressDecision decision = decide(gate, QStringLiteral("http://nowhere.invalid/"));
        QVERIFY(!decision.allowed());
        QVERIFY(decision.refusal.startsWith(QLatin1String("cannot resolve nowhere.invalid")));
    }

    void domainRefusalsNeedNoResolution()
    {
        auto resolver = std::make_shared<FakeResolver>();
        const EgressGate gate(policy({QStringLiteral("example.com")}), resolver);
        const EgressDecision decision = decide(gate, QStringLiteral("http://evil.example/"));
        QVERIFY(decision.refusal.startsWith(QLatin1String("refused (WEB_ALLOWED_DOMAINS)")));
        QCOMPARE(resolver->lookups(QStringLiteral("evil.example")), 0);
    }
};

QTEST_GUILESS_MAIN(TestEgressPolicy)
#include "tst_egresspolicy.moc"
