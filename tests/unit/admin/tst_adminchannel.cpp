// End to end: a real cmcpd, a real MCP client over Streamable HTTP, and the console's
// AdminClient on the admin socket. Every call is seen by the console (within 100 ms of the call
// finishing, median), a running call can be cancelled and a session closed from the console,
// settings change with the start-up rules, bad lines are answered, and a peer that is neither
// root, the daemon's user nor in ADMIN_GROUP is refused even when the socket's mode lets it in.

#include "console/AdminClient.h"
#include "common/AdminProtocol.h"
#include "AdminTestDaemon.h"
#include "OtherUserPeer.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cmcp;

class TestAdminChannel : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_socket;
    QString m_customFile;
    std::unique_ptr<Daemon> m_daemon;
    std::unique_ptr<AdminClient> m_client;
    QList<ReceivedEvent> m_events;
    McpClient m_mcp;

    QStringList daemonArguments(const QStringList &extra = {}) const
    {
        QStringList arguments{"--port", "0", "--config", m_customFile, "--set",
                              "ADMIN_SOCKET=" + m_socket, "--set",
                              "SANDBOX_ROOT=" + m_dir.filePath("sandbox"), "--set",
                              "BASH_ALLOWED_COMMANDS=sleep,echo", "--set", "BASH_WARM_JOBS=0",
                              "--set", "PYTHON_WARM_JOBS=0",
                              // A pool of its own: a job's end kills every process of its uid,
                              // and other tests' daemons run in parallel.
                              "--set", "SANDBOX_UID_BASE=126000", "--set", "SANDBOX_UID_COUNT=50"};
        return arguments + extra;
    }

    std::optional<ReceivedEvent>
    waitForEvent(const std::function<bool(const ReceivedEvent &)> &matches, int timeoutMs = 10000)
    {
        return ::waitForEvent(m_events, matches, timeoutMs);
    }

    QJsonObject request(const QString &method, const QJsonObject &params,
                        QString *errorCode = nullptr, QString *errorMessage = nullptr)
    {
        return adminRequest(*m_client, method, params, errorCode, errorMessage);
    }

private Q_SLOTS:
    void initTestCase()
    {
        prepareDaemonDirectory(m_dir, "# written by the test\nFILE_ALLOWED_EXTENSIONS=txt,md\n",
                               m_socket, m_customFile);
        if (QTest::currentTestFailed())
            return;
        m_daemon = std::make_unique<Daemon>();
        QVERIFY2(m_daemon->start(m_dir.path(), daemonArguments()), qPrintable(m_daemon->log));
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(m_socket), 5000);

        connectRecordingClient(m_client, m_socket, m_events, 200);
        if (QTest::currentTestFailed())
            return;

        m_mcp.url = QStringLiteral("http://127.0.0.1:%1/mcp").arg(m_daemon->port);
        QVERIFY(m_mcp.initialize("admin-e2e"));
    }

    void socketIsPrivate()
    {
        struct stat status
        {
        };
        QCOMPARE(::stat(QFile::encodeName(m_socket).constData(), &status), 0);
        QVERIFY(S_ISSOCK(status.st_mode));
        QCOMPARE(status.st_mode & 0777, mode_t(0600));
        QCOMPARE(::stat(QFile::encodeName(m_dir.filePath("run")).constData(), &status), 0);
        QCOMPARE(status.st_mode & 0777, mode_t(0700));
    }

    void consoleSeesEveryCallPromptly()
    {
        m_events.clear();
        QList<qint64> latencies;
        const int calls = 30;
        for (int i = 0; i < calls; ++i) {
            const QString path = QStringLiteral("note%1.txt").arg(i / 2); // written, then read
            const QJsonObject response = i % 2 == 0
                    ? m_mcp.request(
                            "tools/call",
                            {{"name", "file_write"},
                             {"arguments", QJsonObject{{"path", path}, {"content", "hello"}}}})
                    : m_mcp.request(
                            "tools/call",
                            {{"name", "file_read"}, {"arguments", QJsonObject{{"path", path}}}});
            QVERIFY2(response.contains("result"), QJsonDocument(response).toJson());
            // The events of earlier calls were cleared: this is the one for this call.
            const auto finished = waitForEvent([&](const ReceivedEvent &event) {
                return event.name == QLatin1String(admin::eventCallFinished)
                        && event.data.value("call")
                                   .toObject()
                                   .value("arguments")
                                   .toObject()
                                   .value("path")
                                   .toString()
                        == path;
            });
            QVERIFY(finished);
            const QJsonObject call = finished->data.value("call").toObject();
            QCOMPARE(call.value("clientName").toString(), QStringLiteral("admin-e2e"));
            QCOMPARE(call.value("status").toString(), QStringLiteral("succeeded"));
            const qint64 finishedAt =
                    QDateTime::fromString(call.value("startedAt").toString(), Qt::ISODateWithMs)
                            .toMSecsSinceEpoch()
                    + qint64(call.value("durationMs").toDouble());
            latencies.append(finished->receivedAtMs - finishedAt);
            // Its start was announced before its end.
            const qint64 callId = qint64(call.value("callId").toDouble());
            QVERIFY(std::any_of(m_events.cbegin(), m_events.cend(),
                                [callId](const ReceivedEvent &event) {
                                    return event.name == QLatin1String(admin::eventCallStarted)
                                            && qint64(event.data.value("call")
                                                              .toObject()
                                                              .value("callId")
                                                              .toDouble())
                                            == callId;
                                }));
            m_events.clear();
        }
        std::sort(latencies.begin(), latencies.end());
        const qint64 median = latencies.at(latencies.size() / 2);
        qInfo("call finished → console event: median %lld ms, max %lld ms over %d calls", median,
              latencies.last(), calls);
        QVERIFY2(median <= 100, qPrintable(QString::number(median)));
        QVERIFY2(latencies.last() <= 2000, qPrintable(QString::number(latencies.last())));
    }

    void argumentsAreRedacted()
    {
        m_events.clear();
        m_mcp.request("tools/call",
                      {{"name", "no_such_tool"},
                       {"arguments", QJsonObject{{"password", "hunter2"}, {"user", "ann"}}}});
        const auto finished = waitForEvent([](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventCallFinished);
        });
        QVERIFY(finished);
        const QJsonObject call = finished->data.value("call").toObject();
        QCOMPARE(call.value("status").toString(), QStringLiteral("unknown_tool"));
        QCOMPARE(call.value("arguments").toObject().value("password").toString(),
                 QStringLiteral("********"));
        QCOMPARE(call.value("arguments").toObject().value("user").toString(),
                 QStringLiteral("ann"));
        for (const ReceivedEvent &event : std::as_const(m_events))
            QVERIFY(!QJsonDocument(event.data).toJson().contains("hunter2"));
    }

    void snapshotShowsSessionsCallsConfigAndSandbox()
    {
        const QJsonObject snapshot = request(admin::methodSnapshot, {});
        const QJsonArray sessions = snapshot.value("sessions").toArray();
        QVERIFY(std::any_of(sessions.begin(), sessions.end(), [this](const QJsonValue &session) {
            return session.toObject().value("sessionId").toString() == m_mcp.sessionId
                    && session.toObject().value("clientName").toString() == u"admin-e2e"
                    && session.toObject().value("calls").toInt() >= 31;
        }));
        QVERIFY(snapshot.value("recentCalls").toArray().size() >= 31);
        QHash<QString, QJsonObject> config;
        for (const QJsonValue &setting : snapshot.value("config").toArray())
            config.insert(setting.toObject().value("name").toString(), setting.toObject());
        QCOMPARE(config.value("ADMIN_SOCKET").value("origin").toString(),
                 QStringLiteral("command line"));
        QCOMPARE(config.value("FILE_ALLOWED_EXTENSIONS").value("origin").toString(),
                 QStringLiteral("custom file"));
        QCOMPARE(config.value("MCP_SESSION_IDLE_SECONDS").value("origin").toString(),
                 QStringLiteral("default file"));
        QVERIFY(config.value("LOG_LEVEL").value("live").toBool());
        QVERIFY(!config.value("BASH_NETWORK").value("live").toBool());
        const QJsonObject layers = snapshot.value("sandbox").toObject().value("layers").toObject();
        QVERIFY(layers.contains("seccomp"));
        QVERIFY(!snapshot.value("sandbox").toObject().value("order").toArray().isEmpty());
        QVERIFY(snapshot.value("counters").toObject().value("callsFinished").toDouble() >= 31);
        // The call templates as /health has them, for the console's Sandbox tab: each kind's
        // state and cells (a root daemon has them by default; without root they are off).
        const QJsonObject templates =
                snapshot.value("counters").toObject().value("templates").toObject();
        QCOMPARE(templates.value("enabled").toBool(), ::geteuid() == 0);
        if (::geteuid() == 0) {
            QVERIFY(templates.value("command").toObject().contains("cells"));
            QVERIFY(templates.value("python").toObject().contains("state"));
        }
    }

    void cancelARunningCall()
    {
        m_events.clear();
        std::unique_ptr<QNetworkReply> reply(
                m_mcp.callAsync("system_run_command", {{"command", "sleep 30"}}));
        const auto started = waitForEvent([](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventCallStarted)
                    && event.data.value("call").toObject().value("tool").toString()
                    == u"system_run_command";
        });
        QVERIFY(started);
        const qint64 callId =
                qint64(started->data.value("call").toObject().value("callId").toDouble());
        // It is listed in flight.
        const QJsonArray inFlight = request(admin::methodSnapshot, {}).value("calls").toArray();
        QVERIFY(std::any_of(inFlight.begin(), inFlight.end(), [callId](const QJsonValue &call) {
            return qint64(call.toObject().value("callId").toDouble()) == callId
                    && call.toObject().value("status").toString() == u"running";
        }));
        QString code, message;
        request(admin::methodCancelCall, {{"callId", double(callId)}}, &code, &message);
        m_daemon->readLog();
        QVERIFY2(code.isEmpty(),
                 qPrintable(message + QStringLiteral("\n") + m_daemon->log.right(3000)));
        const auto finished = waitForEvent([callId](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventCallFinished)
                    && qint64(event.data.value("call").toObject().value("callId").toDouble())
                    == callId;
        });
        QVERIFY(finished);
        QCOMPARE(finished->data.value("call").toObject().value("status").toString(),
                 QStringLiteral("cancelled"));
        QVERIFY(McpClient::wait(reply.get(), 10000));
        const QJsonObject response = rpcMessage(reply->readAll());
        QVERIFY2(response.value("error").toObject().value("message").toString().contains(
                         "cancelled by an administrator"),
                 QJsonDocument(response).toJson());

        request(admin::methodCancelCall, {{"callId", double(callId)}}, &code);
        QCOMPARE(code, QString(admin::errorNotFound));
        request(admin::methodCancelCall, {{"callId", "x"}}, &code);
        QCOMPARE(code, QString(admin::errorBadParams));
    }

    // A call that prints for about a second: the console gets its progress (elapsed time, output
    // so far) while it runs, no more often than every progressIntervalMs, growing; a snapshot
    // taken meanwhile carries the figures too.
    void progressOfARunningCall()
    {
        m_events.clear();
        std::unique_ptr<QNetworkReply> reply(m_mcp.callAsync(
                "system_run_command",
                {{"command", "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.2; done"}}));
        const auto started = waitForEvent([](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventCallStarted)
                    && event.data.value("call").toObject().value("tool").toString()
                    == u"system_run_command";
        });
        QVERIFY(started);
        const qint64 callId =
                qint64(started->data.value("call").toObject().value("callId").toDouble());
        const auto isProgressOfCall = [callId](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventCallProgress)
                    && qint64(event.data.value("callId").toDouble()) == callId;
        };
        QVERIFY(waitForEvent(isProgressOfCall));
        const QJsonArray inFlight = request(admin::methodSnapshot, {}).value("calls").toArray();
        QVERIFY(std::any_of(inFlight.begin(), inFlight.end(), [callId](const QJsonValue &call) {
            return qint64(call.toObject().value("callId").toDouble()) == callId
                    && call.toObject().value("outputBytes").toDouble() > 0
                    && call.toObject().contains("elapsedMs");
        }));
        QVERIFY(waitForEvent([callId](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventCallFinished)
                    && qint64(event.data.value("call").toObject().value("callId").toDouble())
                    == callId;
        }));
        QVERIFY(McpClient::wait(reply.get(), 10000));
        QList<ReceivedEvent> progress;
        for (const ReceivedEvent &event : std::as_const(m_events)) {
            if (isProgressOfCall(event))
                progress.append(event);
            // None after the call finished.
            if (event.name == QLatin1String(admin::eventCallFinished))
                break;
        }
        QVERIFY2(progress.size() >= 2, qPrintable(QString::number(progress.size())));
        qInfo("%lld progress events over %.0f ms", qint64(progress.size()),
              progress.last().data.value("elapsedMs").toDouble());
        for (qsizetype i = 1; i < progress.size(); ++i) {
            const QJsonObject &before = progress.at(i - 1).data;
            const QJsonObject &after = progress.at(i).data;
            QVERIFY(after.value("outputBytes").toDouble()
                    >= before.value("outputBytes").toDouble());
            // The daemon's clock: at least one interval apart (a few ms of timer slack allowed).
            QVERIFY2(after.value("elapsedMs").toDouble() - before.value("elapsedMs").toDouble()
                             >= admin::progressIntervalMs - 20,
                     qPrintable(QJsonDocument(before).toJson() + QJsonDocument(after).toJson()));
        }
        QVERIFY(progress.last().data.value("outputBytes").toDouble()
                >= QByteArray("line 1\n").size() * 2);
    }

    void settingsFollowTheStartupRules()
    {
        m_events.clear();
        QString code, message;
        // The daemon's log comes along at the chosen level (a change of setting logs one line).
        request(admin::methodSubscribeLog, {{"level", "loud"}}, &code);
        QCOMPARE(code, QString(admin::errorBadParams));
        request(admin::methodSubscribeLog, {{"level", "info"}}, &code);
        QCOMPARE(code, QString());
        QJsonObject reply = request(admin::methodSetSetting,
                                    {{"name", "LOG_LEVEL"}, {"value", "debug"}}, &code, &message);
        QCOMPARE(code, QString());
        QVERIFY(reply.value("appliedLive").toBool());
        QCOMPARE(reply.value("setting").toObject().value("origin").toString(),
                 QStringLiteral("admin console"));
        QVERIFY(waitForEvent([](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventSettingChanged);
        }));
        QVERIFY(waitForEvent([](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventLog)
                    && event.data.value("level").toString() == u"info"
                    && event.data.value("text").toString().contains(
                            "LOG_LEVEL changed from the console");
        }));
        request(admin::methodSubscribeLog, {{"level", "off"}}, &code);
        QCOMPARE(code, QString());

        reply = request(admin::methodSetSetting,
                        {{"name", "FILE_ALLOWED_EXTENSIONS"}, {"value", "txt,md,log"}}, &code);
        QCOMPARE(code, QString());
        QVERIFY(reply.value("appliedLive").toBool());
        QVERIFY(!reply.value("restartRequired").toBool());
        // A setting the running daemon cannot take is saved for the next start, and says so.
        reply = request(admin::methodSetSetting, {{"name", "MCP_MAX_SESSIONS"}, {"value", "500"}},
                        &code);
        QCOMPARE(code, QString());
        QVERIFY(!reply.value("appliedLive").toBool());
        QVERIFY(reply.value("restartRequired").toBool());
        QVERIFY(!reply.value("setting").toObject().value("live").toBool());

        QFile custom(m_customFile);
        QVERIFY(custom.open(QIODevice::ReadOnly));
        const QByteArray saved = custom.readAll();
        custom.close();
        QVERIFY(saved.contains("# written by the test\n"));
        QVERIFY(saved.contains("\nLOG_LEVEL=debug\n"));
        QVERIFY(saved.contains("FILE_ALLOWED_EXTENSIONS=txt,md,log\n"));
        QVERIFY(saved.contains("MCP_MAX_SESSIONS=500\n"));
        QCOMPARE(saved.count("FILE_ALLOWED_EXTENSIONS"), 1);

        request(admin::methodSetSetting, {{"name", "BASH_TIMEOUT_MAX"}, {"value", "soon"}}, &code,
                &message);
        QCOMPARE(code, QString(admin::errorInvalidValue));
        QVERIFY2(message.contains("must be an integer between"), qPrintable(message));
        request(admin::methodSetSetting, {{"name", "BASH_TIMEOUT_DEFAULT"}, {"value", "500"}},
                &code, &message);
        QCOMPARE(code, QString(admin::errorInvalidValue));
        QVERIFY2(message.contains("BASH_TIMEOUT_MAX"), qPrintable(message));
        request(admin::methodSetSetting, {{"name", "NO_SUCH"}, {"value", "1"}}, &code, &message);
        QCOMPARE(code, QString(admin::errorInvalidValue));
        QVERIFY(custom.open(QIODevice::ReadOnly));
        QCOMPARE(custom.readAll(), saved); // nothing applied on error
    }

    void badLinesAreAnsweredAndTheConnectionCarriesOn()
    {
        QLocalSocket raw;
        raw.connectToServer(m_socket);
        QVERIFY(raw.waitForConnected(5000));
        admin::LineSplitter splitter;
        QList<admin::LineSplitter::Line> lines;
        // The next message that answers what the test wrote: the daemon pushes events (a log
        // line, the counters) to every console as they happen, in between the answers.
        const auto nextAnswer = [&]() -> std::optional<admin::Message> {
            QElapsedTimer timer;
            timer.start();
            while (timer.elapsed() < 10000) {
                while (!lines.isEmpty()) {
                    auto message = admin::decode(lines.takeFirst().bytes, nullptr);
                    if (!message || message->type != admin::MessageType::Event)
                        return message;
                }
                raw.waitForReadyRead(100);
                lines.append(splitter.feed(raw.readAll()));
            }
            return std::nullopt;
        };
        auto reply = nextAnswer();
        QVERIFY(reply);
        QCOMPARE(int(reply->type), int(admin::MessageType::Hello));
        raw.write(admin::encode(admin::Message::hello("raw", "0")));
        raw.write("{\"type\":\n");
        reply = nextAnswer();
        QVERIFY(reply);
        QCOMPARE(reply->errorCode, QString(admin::errorMalformed));
        raw.write(QByteArray(admin::maxLineBytes * 2, 'a') + '\n');
        reply = nextAnswer();
        QVERIFY(reply);
        QCOMPARE(reply->errorCode, QString(admin::errorOversized));
        raw.write(admin::encode(admin::Message::request(3, "explode")));
        reply = nextAnswer();
        QVERIFY(reply);
        QCOMPARE(reply->errorCode, QString(admin::errorUnknownMethod));
        QCOMPARE(reply->id, std::optional<qint64>(3));
        raw.write(admin::encode(admin::Message::request(4, admin::methodSnapshot)));
        reply = nextAnswer();
        QVERIFY(reply);
        QCOMPARE(int(reply->type), int(admin::MessageType::Reply));
        QCOMPARE(reply->id, std::optional<qint64>(4));
    }

    void otherUsersAreRefused()
    {
        if (::geteuid() != 0)
            QSKIP("needs root to run a peer as another user");
        const QByteArray path = QFile::encodeName(m_socket);
        // Let others reach the socket's directory: the socket's own mode 0600 keeps them out.
        QCOMPARE(::chmod(QFile::encodeName(m_dir.filePath("run")).constData(), 0755), 0);
        QCOMPARE(connectAsOtherUser(path, 65534, 65534, {}), int(ConnectDenied));
        // A socket mode opened by mistake: SO_PEERCRED still refuses the stranger.
        QCOMPARE(::chmod(path.constData(), 0666), 0);
        QCOMPARE(connectAsOtherUser(path, 65534, 65534, {}), int(Refused));
        QCOMPARE(::chmod(path.constData(), 0600), 0);
        QTRY_VERIFY_WITH_TIMEOUT(
                (m_daemon->readLog(), m_daemon->log.contains("connection refused: uid 65534")),
                5000);
        // The console's connection is unaffected.
        QCOMPARE(m_client->state(), AdminClient::State::Connected);
    }

    void closeASession()
    {
        m_events.clear();
        QString code;
        request(admin::methodCloseSession, {{"sessionId", m_mcp.sessionId}}, &code);
        QCOMPARE(code, QString());
        QVERIFY(waitForEvent([this](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventSessionClosed)
                    && event.data.value("sessionId").toString() == m_mcp.sessionId;
        }));
        int status = 0;
        m_mcp.request("tools/list", {}, &status);
        QCOMPARE(status, 404);
        request(admin::methodCloseSession, {{"sessionId", m_mcp.sessionId}}, &code);
        QCOMPARE(code, QString(admin::errorNotFound));
    }

    void consoleReconnectsWhenTheDaemonRestarts()
    {
        m_daemon->stop();
        QTRY_COMPARE_WITH_TIMEOUT(m_client->state(), AdminClient::State::Disconnected, 10000);
        QVERIFY(!QFileInfo::exists(m_socket)); // removed on a clean exit
        m_daemon = std::make_unique<Daemon>();
        QVERIFY2(m_daemon->start(m_dir.path(), daemonArguments()), qPrintable(m_daemon->log));
        QTRY_COMPARE_WITH_TIMEOUT(m_client->state(), AdminClient::State::Connected, 10000);
        // The value saved from the console is back after the restart.
        const QJsonArray config = request(admin::methodSnapshot, {}).value("config").toArray();
        QVERIFY(std::any_of(config.begin(), config.end(), [](const QJsonValue &setting) {
            return setting.toObject().value("name").toString() == u"FILE_ALLOWED_EXTENSIONS"
                    && setting.toObject().value("value").toString() == u"txt,md,log";
        }));
    }

    void adminGroupMembersAreLetIn()
    {
        if (::geteuid() != 0)
            QSKIP("needs root to run a peer as another user");
        const group *users = ::getgrnam("users");
        if (!users)
            QSKIP("no group named users");
        m_daemon->stop();
        m_daemon = std::make_unique<Daemon>();
        QVERIFY2(m_daemon->start(m_dir.path(), daemonArguments({"--set", "ADMIN_GROUP=users"})),
                 qPrintable(m_daemon->log));
        struct stat status
        {
        };
        QCOMPARE(::stat(QFile::encodeName(m_socket).constData(), &status), 0);
        QCOMPARE(status.st_mode & 0777, mode_t(0660));
        QCOMPARE(status.st_gid, users->gr_gid);
        QCOMPARE(::chmod(QFile::encodeName(m_dir.filePath("run")).constData(), 0755), 0);
        const QByteArray path = QFile::encodeName(m_socket);
        QCOMPARE(connectAsOtherUser(path, 65534, 65534, {users->gr_gid}), int(Greeted));
        QCOMPARE(connectAsOtherUser(path, 65534, users->gr_gid, {}), int(Greeted));
        // Not in the group: the mode keeps it out, and were the mode open, SO_PEERCRED would.
        QCOMPARE(connectAsOtherUser(path, 65534, 65534, {}), int(ConnectDenied));
        QCOMPARE(::chmod(path.constData(), 0666), 0);
        QCOMPARE(connectAsOtherUser(path, 65534, 65534, {}), int(Refused));
    }

    void cleanupTestCase()
    {
        m_client.reset();
        if (m_daemon)
            m_daemon->stop();
    }
};

QTEST_GUILESS_MAIN(TestAdminChannel)
#include "tst_adminchannel.moc"
