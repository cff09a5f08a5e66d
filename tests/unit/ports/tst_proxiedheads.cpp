// What the published ports' reverse proxy sends on and gives back: the job's server sees its own
// Host, none of the daemon's Authorization or the client's hop-by-hop and forwarding headers;
// the client sees no hop-by-hop header of the server's and redirects under the published
// prefix. And the framing rule that keeps smuggled requests out: Content-Length with
// Transfer-Encoding is refused before any route.

#include "ports/ProxiedHeads.h"
#include "transport/RequestFraming.h"

#include <QTest>

using namespace cmcp;

namespace {

RequestHead headOf(const QByteArray &block)
{
    std::optional<RequestHead> head = RequestHead::parse(block);
    Q_ASSERT(head);
    return *head;
}

const QByteArray prefix = "/ports/pt_0123/";

} // namespace

class TestProxiedHeads : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void requestHeadersAreRewritten()
    {
        const RequestHead head = headOf("POST /ports/pt_0123/api?x=1 HTTP/1.1\r\n"
                                        "Host: 127.0.0.1:8080\r\n"
                                        "Authorization: Bearer daemon-secret\r\n"
                                        "Connection: keep-alive, X-Private\r\n"
                                        "X-Private: hop\r\n"
                                        "X-Forwarded-For: 6.6.6.6\r\n"
                                        "Forwarded: for=6.6.6.6\r\n"
                                        "Content-Length: 999\r\n"
                                        "Content-Length: 5\r\n"
                                        "Expect: 100-continue\r\n"
                                        "Accept: text/html\r\n\r\n");
        const QByteArray sent = proxy::upstreamRequest(head, "/api?x=1", 8001, prefix, false, 5);
        QVERIFY(sent.startsWith("POST /api?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8001\r\n"));
        QVERIFY(!sent.contains("daemon-secret"));
        QVERIFY(!sent.toLower().contains("x-private"));
        QVERIFY(!sent.contains("6.6.6.6"));
        QVERIFY(!sent.toLower().contains("expect"));
        QCOMPARE(sent.count("ontent-Length"), 1);
        QVERIFY(sent.contains("Content-Length: 5\r\n"));
        QVERIFY(sent.contains("accept: text/html\r\n"));
        QVERIFY(sent.contains("X-Forwarded-Host: 127.0.0.1:8080\r\n"));
        QVERIFY(sent.contains("X-Forwarded-Prefix: /ports/pt_0123\r\n"));
        QVERIFY(sent.endsWith("Connection: close\r\n\r\n"));
    }

    void webSocketUpgradeIsKept()
    {
        const RequestHead head = headOf("GET /ports/pt_0123/ws HTTP/1.1\r\nHost: h\r\n"
                                        "Connection: Upgrade\r\nUpgrade: websocket\r\n"
                                        "Sec-WebSocket-Key: abc\r\n\r\n");
        QVERIFY(proxy::wantsWebSocket(head));
        const QByteArray sent = proxy::upstreamRequest(head, "/ws", 8001, prefix, true, 0);
        QVERIFY(sent.contains("Connection: Upgrade\r\nUpgrade: websocket\r\n"));
        QVERIFY(sent.contains("sec-websocket-key: abc\r\n"));
        QVERIFY(!proxy::wantsWebSocket(headOf("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n")));
    }

    void headsThatParseTwoWaysAreRefused()
    {
        QVERIFY(!proxy::headProblem(headOf("GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n")).isEmpty());
        QVERIFY(!proxy::headProblem(headOf("GET / HTTP/1.1\r\nX A: b\r\n\r\n")).isEmpty());
        QVERIFY(proxy::headProblem(headOf("GET / HTTP/1.1\r\nX-A: a\tb\r\n\r\n")).isEmpty());
    }

    void responseHeadersAreRewritten()
    {
        QString error;
        const auto answer = proxy::downstreamResponse(
                "HTTP/1.0 302 Found\r\nLocation: http://127.0.0.1:8001/next\r\n"
                "Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nX-Kept: yes\r\n\r\n",
                prefix, 8001, false, &error);
        QVERIFY2(answer, qPrintable(error));
        QCOMPARE(answer->status, 302);
        QVERIFY(answer->block.contains("location: /ports/pt_0123/next\r\n"));
        QVERIFY(!answer->block.toLower().contains("keep-alive"));
        QVERIFY(answer->block.contains("x-kept: yes\r\n"));
        QVERIFY(answer->block.endsWith("Connection: close\r\n\r\n"));

        const auto absolute = proxy::downstreamResponse(
                "HTTP/1.1 301 Moved\r\nLocation: /docs/\r\n\r\n", prefix, 8001, false, &error);
        QVERIFY(absolute->block.contains("location: /ports/pt_0123/docs/\r\n"));
        // Elsewhere: relayed as it is, for the client alone to judge.
        const auto elsewhere = proxy::downstreamResponse(
                "HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/\r\n\r\n", prefix, 8001,
                false, &error);
        QVERIFY(elsewhere->block.contains("location: http://169.254.169.254/\r\n"));
        const auto protocolRelative =
                proxy::downstreamResponse("HTTP/1.1 302 Found\r\nLocation: //evil.example/\r\n\r\n",
                                          prefix, 8001, false, &error);
        QVERIFY(protocolRelative->block.contains("location: //evil.example/\r\n"));
    }

    void upgradesOnlyWhenAsked()
    {
        QString error;
        const QByteArray switching = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                     "Connection: Upgrade\r\n\r\n";
        QVERIFY(!proxy::downstreamResponse(switching, prefix, 8001, false, &error));
        const auto upgraded = proxy::downstreamResponse(switching, prefix, 8001, true, &error);
        QVERIFY(upgraded);
        QVERIFY(upgraded->block.endsWith("Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n"));
        QVERIFY(!proxy::downstreamResponse("SSH-2.0-x\r\n\r\n", prefix, 8001, false, &error));
    }

    void lengthWithEncodingIsRefused()
    {
        RequestFraming framing(1 << 20);
        const auto refusal = framing.feed("POST /mcp HTTP/1.1\r\nContent-Length: 5\r\n"
                                          "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        QVERIFY(refusal);
        QCOMPARE(refusal->status, 400);
        RequestFraming chunked(1 << 20);
        QCOMPARE(chunked.feed("POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")->status,
                 411);
    }

    void takenPrefixesAreStreamed()
    {
        RequestFraming framing(16, {"GET /ports/", "PUT /transfer/"});
        QVERIFY(framing.mayBeStreamed("GET /po"));
        QVERIFY(!framing.mayBeStreamed("GET /mcp"));
        QVERIFY(!framing.feed("GET /ports/pt_1/ HTTP/1.1\r\nContent-Length: 100\r\n\r\n"));
        QVERIFY(framing.streamedHeadComplete()); // its body is the route's, past the 16 bytes
    }
};

QTEST_GUILESS_MAIN(TestProxiedHeads)
#include "tst_proxiedheads.moc"
