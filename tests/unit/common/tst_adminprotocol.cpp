// The admin channel's message protocol (common/AdminProtocol): what both cmcpd and cmcp-console
// read and write.

#include "common/AdminProtocol.h"
#include "base/SecretRedaction.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace cmcp::admin;

class TestAdminProtocol : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roundTrips_data()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("hello") << 0;
        QTest::newRow("event") << 1;
        QTest::newRow("request") << 2;
        QTest::newRow("reply") << 3;
        QTest::newRow("error with id") << 4;
        QTest::newRow("error without id") << 5;
        QTest::newRow("progress") << 6;
    }
    void roundTrips()
    {
        QFETCH(int, kind);
        const QJsonObject body{{"callId", 42},
                               {"nested", QJsonObject{{"list", QJsonArray{1, "two"}}}}};
        const Message messages[] = {
                Message::hello("cmcpd", "1.2.3"),
                Message::event(eventCallFinished, body),
                Message::request(9007199254740991, methodCancelCall, body),
                Message::reply(7, body),
                Message::error(7, errorNotFound, "no call 42 is running"),
                Message::error(std::nullopt, errorMalformed, "not JSON"),
                Message::event(
                        eventCallProgress,
                        {{"callId", 42}, {"elapsedMs", 1250}, {"outputBytes", 9007199254740991.0}}),
        };
        const Message &sent = messages[kind];
        const QByteArray line = encode(sent);
        QVERIFY(line.endsWith('\n'));
        QCOMPARE(line.count('\n'), 1); // one line, whatever the body holds
        QString error;
        const std::optional<Message> read = decode(line.chopped(1), &error);
        QVERIFY2(read, qPrintable(error));
        QCOMPARE(int(read->type), int(sent.type));
        QCOMPARE(read->version, sent.version);
        QCOMPARE(read->program, sent.program);
        QCOMPARE(read->programVersion, sent.programVersion);
        QCOMPARE(read->name, sent.name);
        QCOMPARE(read->id, sent.id);
        QCOMPARE(read->body, sent.body);
        QCOMPARE(read->errorCode, sent.errorCode);
        QCOMPARE(read->errorMessage, sent.errorMessage);
    }

    void newlinesInStringsStayOnOneLine()
    {
        const QByteArray line = encode(Message::event(eventLog, {{"text", "two\nlines"}}));
        QCOMPARE(line.count('\n'), 1);
        QCOMPARE(decode(line, nullptr)->body.value("text").toString(),
                 QStringLiteral("two\nlines"));
    }

    void versionMismatch()
    {
        QVERIFY(checkHello(Message::hello("cmcpd", "x")).isEmpty());
        Message other = Message::hello("cmcpd", "x");
        other.version = protocolVersion + 1;
        const QString refusal = checkHello(other);
        QVERIFY(refusal.contains(QString::number(protocolVersion + 1)));
        QVERIFY(refusal.contains(QString::number(protocolVersion)));
        QVERIFY(!checkHello(Message::event(eventLog, {})).isEmpty());
        // A hello read from the wire keeps the version it claims, so the check can refuse it.
        const auto read = decode(R"({"type":"hello","version":2})", nullptr);
        QVERIFY(read);
        QVERIFY(!checkHello(*read).isEmpty());
    }

    void malformed_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QString>("problem");
        QTest::newRow("not json") << QByteArray("hello there") << "not JSON";
        QTest::newRow("truncated") << QByteArray(R"({"type":"request")") << "not JSON";
        QTest::newRow("array") << QByteArray("[1,2]") << "must be a JSON object";
        QTest::newRow("no type") << QByteArray(R"({"id":1})") << "\"type\"";
        QTest::newRow("unknown type") << QByteArray(R"({"type":"shout"})") << "\"type\"";
        QTest::newRow("string id")
                << QByteArray(R"({"type":"request","id":"1","method":"snapshot"})") << "\"id\"";
        QTest::newRow("fractional id")
                << QByteArray(R"({"type":"request","id":1.5,"method":"snapshot"})") << "\"id\"";
        QTest::newRow("negative id")
                << QByteArray(R"({"type":"request","id":-1,"method":"snapshot"})") << "\"id\"";
        QTest::newRow("request without id")
                << QByteArray(R"({"type":"request","method":"snapshot"})") << "needs an \"id\"";
        QTest::newRow("request without method")
                << QByteArray(R"({"type":"request","id":1})") << "\"method\"";
        QTest::newRow("params not object")
                << QByteArray(R"({"type":"request","id":1,"method":"x","params":[1]})")
                << "\"params\"";
        QTest::newRow("hello without version")
                << QByteArray(R"({"type":"hello"})") << "\"version\"";
        QTest::newRow("event without name")
                << QByteArray(R"({"type":"event","data":{}})") << "\"event\"";
        QTest::newRow("error without code")
                << QByteArray(R"({"type":"error","id":3})") << "\"code\"";
    }
    void malformed()
    {
        QFETCH(QByteArray, line);
        QFETCH(QString, problem);
        QString error;
        QVERIFY(!decode(line, &error));
        QVERIFY2(error.contains(problem), qPrintable(error));
    }

    void malformedRequestStillNamesItsId()
    {
        std::optional<qint64> id;
        QVERIFY(!decode(R"({"type":"request","id":12,"params":"x"})", nullptr, &id));
        QCOMPARE(id, std::optional<qint64>(12));
    }

    void splitterJoinsChunksAndSkipsBlankLines()
    {
        LineSplitter splitter(64);
        QCOMPARE(splitter.feed("{\"a\":").size(), 0);
        const auto lines = splitter.feed("1}\n\n  \n{\"b\":2}\n{\"c\"");
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines.at(0).bytes, QByteArray("{\"a\":1}"));
        QCOMPARE(lines.at(1).bytes, QByteArray("{\"b\":2}"));
        const auto rest = splitter.feed(":3}\n");
        QCOMPARE(rest.size(), 1);
        QCOMPARE(rest.at(0).bytes, QByteArray("{\"c\":3}"));
    }

    void splitterReportsAnOversizedLineOnceAndCarriesOn()
    {
        LineSplitter splitter(16);
        QCOMPARE(splitter.feed(QByteArray(10, 'x')).size(), 0);
        QCOMPARE(splitter.feed(QByteArray(100, 'y')).size(), 0); // dropped as it arrives
        const auto lines = splitter.feed(QByteArray(5, 'z') + "\nshort\n");
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines.at(0).oversized);
        QVERIFY(lines.at(0).bytes.isEmpty());
        QVERIFY(!lines.at(1).oversized);
        QCOMPARE(lines.at(1).bytes, QByteArray("short"));
        // Exactly the limit is fine.
        const auto exact = splitter.feed(QByteArray(16, 'e') + '\n');
        QCOMPARE(exact.size(), 1);
        QVERIFY(!exact.at(0).oversized);
    }

    void redactsSecretsAtAnyDepth()
    {
        const QJsonObject arguments{
                {"command", "ls"},
                {"password", "hunter2"},
                {"API_KEY", "k"},
                {"headers", QJsonObject{{"Authorization", "Bearer x"}, {"Accept", "*/*"}}},
                {"env", QJsonArray{QJsonObject{{"github_token", "ghp_x"}, {"name", "n"}}}},
        };
        const QJsonObject redacted = redactSecrets(arguments);
        QCOMPARE(redacted.value("command").toString(), QStringLiteral("ls"));
        QCOMPARE(redacted.value("password").toString(), QStringLiteral("********"));
        QCOMPARE(redacted.value("API_KEY").toString(), QStringLiteral("********"));
        QCOMPARE(redacted.value("headers").toObject().value("Authorization").toString(),
                 QStringLiteral("********"));
        QCOMPARE(redacted.value("headers").toObject().value("Accept").toString(),
                 QStringLiteral("*/*"));
        const QJsonObject env = redacted.value("env").toArray().at(0).toObject();
        QCOMPARE(env.value("github_token").toString(), QStringLiteral("********"));
        QCOMPARE(env.value("name").toString(), QStringLiteral("n"));
        const QByteArray all = QJsonDocument(redacted).toJson();
        QVERIFY(!all.contains("hunter2"));
        QVERIFY(!all.contains("ghp_x"));
        QVERIFY(!all.contains("Bearer"));
    }
};

QTEST_GUILESS_MAIN(TestAdminProtocol)
#include "tst_adminprotocol.moc"
