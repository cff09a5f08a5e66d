// What the end-to-end tests of the admin channel share: a real cmcpd started in a directory (its
// port read from its log), a minimal MCP client over Streamable HTTP, and the events a console
// received.
#pragma once

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "console/AdminClient.h"

#include <functional>
#include <memory>
#include <optional>
#include <sys/stat.h>

namespace {

// Readies `dir` for a test daemon: open to the pool's uids (jobs must reach the workspace
// inside) and with its custom env file written; gives the admin socket's path and the file's.
// A failure fails the calling test (check QTest::currentTestFailed()).
void prepareDaemonDirectory(const QTemporaryDir &dir, const QByteArray &customEnv, QString &socket,
                            QString &customFile)
{
    QVERIFY(dir.isValid());
    QCOMPARE(::chmod(QFile::encodeName(dir.path()).constData(), 0755), 0);
    socket = dir.filePath("run/admin.sock");
    customFile = dir.filePath("custom.env");
    QFile custom(customFile);
    QVERIFY(custom.open(QIODevice::WriteOnly));
    QCOMPARE(custom.write(customEnv), qint64(customEnv.size()));
}

// The last JSON-RPC message of a response, whether it came as JSON or as an SSE stream.
QJsonObject rpcMessage(const QByteArray &body)
{
    if (body.trimmed().startsWith('{'))
        return QJsonDocument::fromJson(body).object();
    QJsonObject last;
    for (const QByteArray &line : body.split('\n')) {
        if (line.startsWith("data:"))
            last = QJsonDocument::fromJson(line.mid(5).trimmed()).object();
    }
    return last;
}

class Daemon
{
public:
    QProcess process;
    QString log;
    quint16 port = 0;

    bool start(const QString &directory, const QStringList &arguments)
    {
        process.setWorkingDirectory(directory);
        process.setProcessChannelMode(QProcess::SeparateChannels);
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove(QStringLiteral("ADMIN_SOCKET"));
        process.setProcessEnvironment(environment);
        process.start(QStringLiteral(CMCPD_PATH), arguments);
        if (!process.waitForStarted(10000))
            return false;
        const QRegularExpression listening(
                QStringLiteral("listening on http://127\\.0\\.0\\.1:(\\d+)/mcp"));
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 30000 && process.state() == QProcess::Running) {
            process.waitForReadyRead(100);
            log += QString::fromUtf8(process.readAllStandardError());
            const auto match = listening.match(log);
            if (match.hasMatch()) {
                port = quint16(match.captured(1).toUInt());
                return true;
            }
        }
        return false;
    }
    void readLog() { log += QString::fromUtf8(process.readAllStandardError()); }
    void stop()
    {
        if (process.state() == QProcess::NotRunning)
            return;
        process.terminate();
        if (!process.waitForFinished(10000)) {
            process.kill();
            process.waitForFinished(5000);
        }
        readLog();
    }
    ~Daemon() { stop(); }
};

// A minimal MCP client over Streamable HTTP.
class McpClient
{
public:
    QNetworkAccessManager network;
    QString url;
    QString sessionId;
    qint64 nextId = 1;

    QNetworkReply *post(const QJsonObject &message)
    {
        QNetworkRequest request{QUrl(url)};
        request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        request.setRawHeader("Accept", "application/json, text/event-stream");
        request.setRawHeader("MCP-Protocol-Version", "2025-06-18");
        if (!sessionId.isEmpty())
            request.setRawHeader("Mcp-Session-Id", sessionId.toUtf8());
        request.setTransferTimeout(60000);
        return network.post(request, QJsonDocument(message).toJson(QJsonDocument::Compact));
    }
    static bool wait(QNetworkReply *reply, int timeoutMs = 30000)
    {
        if (!reply->isFinished()) {
            QSignalSpy finished(reply, &QNetworkReply::finished);
            finished.wait(timeoutMs);
        }
        return reply->isFinished();
    }
    QJsonObject request(const QString &method, const QJsonObject &params, int *status = nullptr)
    {
        std::unique_ptr<QNetworkReply> reply(post({{"jsonrpc", "2.0"},
                                                   {"id", double(nextId++)},
                                                   {"method", method},
                                                   {"params", params}}));
        if (!wait(reply.get()))
            return {};
        if (status)
            *status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (sessionId.isEmpty())
            sessionId = QString::fromUtf8(reply->rawHeader("Mcp-Session-Id"));
        return rpcMessage(reply->readAll());
    }
    QNetworkReply *callAsync(const QString &tool, const QJsonObject &arguments)
    {
        return post({{"jsonrpc", "2.0"},
                     {"id", double(nextId++)},
                     {"method", "tools/call"},
                     {"params", QJsonObject{{"name", tool}, {"arguments", arguments}}}});
    }
    bool initialize(const QString &clientName)
    {
        const QJsonObject result =
                request("initialize",
                        {{"protocolVersion", "2025-06-18"},
                         {"capabilities", QJsonObject{}},
                         {"clientInfo", QJsonObject{{"name", clientName}, {"version", "1"}}}});
        if (!result.contains("result") || sessionId.isEmpty())
            return false;
        std::unique_ptr<QNetworkReply> reply(
                post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
        return wait(reply.get());
    }
};

struct ReceivedEvent
{
    QString name;
    QJsonObject data;
    qint64 receivedAtMs = 0; // wall clock, comparable with the daemon's timestamps
};

// An admin client, connected to `socket`, that appends every event it receives to `events`
// (which outlives it). `client` keeps its own reconnect interval unless one is given. A failure
// fails the calling test (check QTest::currentTestFailed()).
void connectRecordingClient(std::unique_ptr<cmcp::AdminClient> &client, const QString &socket,
                            QList<ReceivedEvent> &events, int reconnectIntervalMs = 0)
{
    client = std::make_unique<cmcp::AdminClient>();
    if (reconnectIntervalMs > 0)
        client->setReconnectInterval(reconnectIntervalMs);
    QObject::connect(client.get(), &cmcp::AdminClient::eventReceived, client.get(),
                     [&events](const QString &name, const QJsonObject &data) {
                         events.append({name, data, QDateTime::currentMSecsSinceEpoch()});
                     });
    client->open(socket);
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), cmcp::AdminClient::State::Connected, 10000);
}

// The first of `events` (which grows while the event loop runs) that matches.
std::optional<ReceivedEvent> waitForEvent(const QList<ReceivedEvent> &events,
                                          const std::function<bool(const ReceivedEvent &)> &matches,
                                          int timeoutMs = 10000)
{
    QElapsedTimer timer;
    timer.start();
    for (;;) {
        for (const ReceivedEvent &event : events) {
            if (matches(event))
                return event;
        }
        if (timer.elapsed() > timeoutMs)
            return std::nullopt;
        QTest::qWait(5);
    }
}

// A request on the admin channel, waited for: its result, or the error's code and message.
QJsonObject adminRequest(cmcp::AdminClient &client, const QString &method,
                         const QJsonObject &params, QString *errorCode = nullptr,
                         QString *errorMessage = nullptr)
{
    bool done = false;
    QJsonObject reply;
    client.request(method, params,
                   [&](const QJsonObject &result, const QString &code, const QString &message) {
                       reply = result;
                       if (errorCode)
                           *errorCode = code;
                       if (errorMessage)
                           *errorMessage = message;
                       done = true;
                   });
    QElapsedTimer timer;
    timer.start();
    while (!done && timer.elapsed() < 10000)
        QTest::qWait(5);
    if (!done && errorCode)
        *errorCode = QStringLiteral("timeout");
    return reply;
}

} // namespace
