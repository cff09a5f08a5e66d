// The whole HTTP request path up to the router, end to end: the fuzzed bytes go over a loopback
// TCP connection to a real HttpServer (GuardedTcpServer's framing, Qt's HTTP parser, the Host,
// Origin and bearer-token guards, the router, the Streamable HTTP and legacy SSE transports and
// the JSON-RPC layer behind them, and the streamed PUT bodies the guard takes over from Qt's
// parser, here to /dev/null). Slower per input than the unit targets, so it finds less per
// second, but nothing between the socket and the MCP core is left out.
#include "conformance/fixtures/ConformanceFixtures.h"
#include "FuzzSupport.h"
#include "transport/HttpOptions.h"
#include "transport/HttpServer.h"
#include "mcp/McpServer.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QTcpSocket>

#include <spdlog/spdlog.h>

#include <cstdint>
#include <fcntl.h>

using namespace cmcp;

namespace {

struct Server
{
    McpServer mcp{ServerIdentity{}};
    std::unique_ptr<HttpServer> http;
    quint16 port = 0;
};

Server *server = nullptr;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static QCoreApplication app(*argc, *argv);
    spdlog::set_level(spdlog::level::off);
    server = new Server;
    server->mcp.setMaxSessions(64);
    registerConformanceFixtures(server->mcp);
    HttpOptions options;
    options.port = 0;
    options.allowedHosts = {QStringLiteral("127.0.0.1"), QStringLiteral("localhost")};
    options.tokens.add(Principal(QStringLiteral("fuzz")),
                       QCryptographicHash::hash("fuzz-token", QCryptographicHash::Sha256));
    options.maxBodyBytes = 64 * 1024;
    server->http = std::make_unique<HttpServer>(server->mcp, options);
    server->http->setStreamedPutRoute(
            QStringLiteral("/transfer/"), [](const RequestHead &head, const Principal &) {
                StreamedBodyPlan plan;
                if (head.path != QLatin1String("/transfer/sink")) {
                    plan.refusal = http::Answer{404, "{}", {}};
                    return plan;
                }
                plan.file = UniqueFd(::open("/dev/null", O_WRONLY | O_CLOEXEC));
                plan.finish = [](qint64 written, int) {
                    return http::Answer{201, QByteArray::number(written), {}};
                };
                return plan;
            });
    QString error;
    server->port = server->http->start(&error);
    FUZZ_CHECK(server->port != 0);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, server->port);
    FUZZ_CHECK(client.waitForConnected(2000));
    client.write(reinterpret_cast<const char *>(data), qint64(size));
    // Serve until the server closes the connection or has been quiet for a moment (a request
    // waiting for more bytes, a kept-alive connection, an open SSE stream).
    QElapsedTimer total, quiet;
    total.start();
    quiet.start();
    qint64 seen = 0;
    while (client.state() == QAbstractSocket::ConnectedState && total.elapsed() < 200
           && quiet.elapsed() < 10) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        client.waitForReadyRead(1);
        const qint64 now = client.bytesAvailable();
        if (now != seen) {
            seen = now;
            quiet.restart();
        }
    }
    client.abort();
    for (int i = 0; i < 3; ++i)
        QCoreApplication::processEvents();
    return 0;
}
