// The Streamable HTTP transport at /mcp, behind the HttpServer that routes to it, as a client sees
// it: initialize opens a session named in the Mcp-Session-Id header, a POST is answered with
// JSON or an SSE stream, a request without the session, with a session that does not exist or
// with an Accept that leaves out either form is refused with the status that says why, a
// foreign Origin is refused at the door, and DELETE ends the session.

#include "mcp/McpServer.h"
#include "mcp/ProtocolVersion.h"
#include "transport/HttpOptions.h"
#include "transport/HttpServer.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTest>

#include <memory>

using namespace cmcp;

namespace {

struct Answer
{
    int status = 0;
    QByteArray sessionId; // the Mcp-Session-Id header
    QByteArray contentType;
    QJsonObject message; // the JSON-RPC message of the body, whichever form it came in
};

// The JSON-RPC message of a body: the body itself, or the data of an SSE stream's message event.
QJsonObject messageOf(const QByteArray &contentType, const QByteArray &body)
{
    if (!contentType.startsWith("text/event-stream"))
        return QJsonDocument::fromJson(body).object();
    for (const QByteArray &line : body.split('\n')) {
        if (line.startsWith("data:")) {
            const QJsonObject message = QJsonDocument::fromJson(line.mid(5).trimmed()).object();
            if (!message.isEmpty())
                return message;
        }
    }
    return {};
}

const QByteArray kBothForms = "application/json, text/event-stream";

} // namespace

class TestStreamableHttpTransport : public QObject
{
    Q_OBJECT

    std::unique_ptr<McpServer> m_mcp;
    std::unique_ptr<HttpServer> m_http;
    QNetworkAccessManager m_network;
    quint16 m_port = 0;

    Answer send(const QByteArray &method, const QByteArray &body, const QByteArray &sessionId,
                const QByteArray &accept = kBothForms, const QByteArray &origin = {})
    {
        QNetworkRequest request(QUrl(QStringLiteral("http://127.0.0.1:%1/mcp").arg(m_port)));
        request.setRawHeader("Content-Type", "application/json");
        request.setRawHeader("Accept", accept);
        if (!sessionId.isEmpty()) {
            request.setRawHeader("Mcp-Session-Id", sessionId);
            request.setRawHeader("MCP-Protocol-Version", protocol::V2025_06_18.toLatin1());
        }
        if (!origin.isEmpty())
            request.setRawHeader("Origin", origin);
        QNetworkReply *reply = m_network.sendCustomRequest(request, method, body);
        Answer answer;
        if (!QTest::qWaitFor([reply] { return reply->isFinished(); }, 10000)) {
            reply->abort();
            reply->deleteLater();
            return answer;
        }
        answer.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        answer.sessionId = reply->rawHeader("Mcp-Session-Id");
        answer.contentType = reply->rawHeader("Content-Type");
        answer.message = messageOf(answer.contentType, reply->readAll());
        reply->deleteLater();
        return answer;
    }

    QByteArray request(int id, const QString &method, const QJsonObject &params = {})
    {
        QJsonObject message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
        if (!params.isEmpty())
            message.insert(QStringLiteral("params"), params);
        return QJsonDocument(message).toJson(QJsonDocument::Compact);
    }

    // A session of its own, initialized; empty when that failed.
    QByteArray initialize()
    {
        const Answer answer =
                send("POST",
                     request(1, QStringLiteral("initialize"),
                             {{"protocolVersion", protocol::V2025_06_18},
                              {"capabilities", QJsonObject()},
                              {"clientInfo", QJsonObject{{"name", "test"}, {"version", "1"}}}}),
                     {});
        if (answer.status != 200 || answer.sessionId.isEmpty())
            return {};
        const Answer initialized =
                send("POST",
                     QJsonDocument(QJsonObject{{"jsonrpc", "2.0"},
                                               {"method", "notifications/initialized"}})
                             .toJson(QJsonDocument::Compact),
                     answer.sessionId);
        return initialized.status == 202 ? answer.sessionId : QByteArray();
    }

private Q_SLOTS:
    void init()
    {
        m_mcp = std::make_unique<McpServer>(ServerIdentity{});
        HttpOptions options;
        options.port = 0;
        options.allowedHosts = {QStringLiteral("127.0.0.1"), QStringLiteral("localhost")};
        m_http = std::make_unique<HttpServer>(*m_mcp, options);
        QString error;
        m_port = m_http->start(&error);
        QVERIFY2(m_port != 0, qPrintable(error));
    }

    void cleanup()
    {
        m_http.reset();
        m_mcp.reset();
    }

    void initializeOpensASessionNamedInItsHeader()
    {
        const Answer answer =
                send("POST",
                     request(1, QStringLiteral("initialize"),
                             {{"protocolVersion", protocol::V2025_06_18},
                              {"capabilities", QJsonObject()},
                              {"clientInfo", QJsonObject{{"name", "test"}, {"version", "1"}}}}),
                     {});
        QCOMPARE(answer.status, 200);
        QVERIFY(!answer.sessionId.isEmpty());
        QVERIFY2(answer.contentType.startsWith("application/json")
                         || answer.contentType.startsWith("text/event-stream"),
                 answer.contentType.constData());
        QCOMPARE(answer.message.value(u"id").toInt(), 1);
        QCOMPARE(answer.message.value(u"result").toObject().value(u"protocolVersion").toString(),
                 protocol::V2025_06_18);
        // Each initialize opens a session of its own.
        QVERIFY(initialize() != answer.sessionId);
    }

    void aRequestInTheSessionIsAnswered()
    {
        const QByteArray session = initialize();
        QVERIFY(!session.isEmpty());
        const Answer answer = send("POST", request(2, QStringLiteral("ping")), session);
        QCOMPARE(answer.status, 200);
        QCOMPARE(answer.message.value(u"id").toInt(), 2);
        QVERIFY(answer.message.value(u"result").isObject());
    }

    void aRequestWithoutOrWithAnUnknownSessionIsRefused()
    {
        QVERIFY(!initialize().isEmpty());
        QCOMPARE(send("POST", request(2, QStringLiteral("ping")), {}).status, 400);
        QCOMPARE(send("POST", request(2, QStringLiteral("ping")), "no-such-session").status, 404);
    }

    void anAcceptWithoutBothFormsIsRefused()
    {
        const QByteArray session = initialize();
        QVERIFY(!session.isEmpty());
        QCOMPARE(send("POST", request(2, QStringLiteral("ping")), session, "application/json")
                         .status,
                 406);
        QCOMPARE(send("POST", request(2, QStringLiteral("ping")), session, "text/html").status,
                 406);
    }

    void aForeignOriginIsRefused()
    {
        const QByteArray session = initialize();
        QVERIFY(!session.isEmpty());
        QCOMPARE(send("POST", request(2, QStringLiteral("ping")), session, kBothForms,
                      "http://evil.example")
                         .status,
                 403);
        QCOMPARE(send("POST", request(3, QStringLiteral("ping")), session, kBothForms,
                      "http://localhost")
                         .status,
                 200);
    }

    void deleteEndsTheSession()
    {
        const QByteArray session = initialize();
        QVERIFY(!session.isEmpty());
        QCOMPARE(send("DELETE", {}, session).status, 200);
        QCOMPARE(send("POST", request(2, QStringLiteral("ping")), session).status, 404);
        QCOMPARE(send("DELETE", {}, session).status, 404);
    }
};

QTEST_GUILESS_MAIN(TestStreamableHttpTransport)
#include "tst_streamablehttptransport.moc"
