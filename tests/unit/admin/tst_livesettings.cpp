// Settings changed on the admin channel of a real cmcpd reach the next tool call of a real MCP
// client, while a call already running keeps the policy it started with: the allowed commands
// (held by the kernel, in warm jobs too), the time limits, the allowed file extensions, and the
// web egress rules. A value the tools cannot use is refused, and nothing changes.

#include "common/AdminProtocol.h"
#include "AdminTestDaemon.h"
#include "support/LoopbackHttpServer.h"
#include "common/SettingsTable.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace cmcp;

class TestLiveSettings : public QObject
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

    // The admin channel's answer to a change: "" when applied live, else the error's message.
    QString set(const QString &name, const QString &value)
    {
        QString code, message;
        const QJsonObject reply = adminRequest(*m_client, admin::methodSetSetting,
                                               {{"name", name}, {"value", value}}, &code, &message);
        if (!code.isEmpty())
            return code + QStringLiteral(": ") + message;
        return reply.value("appliedLive").toBool() ? QString() : QStringLiteral("not applied live");
    }

    QJsonObject call(const QString &tool, const QJsonObject &arguments)
    {
        return m_mcp.request("tools/call", {{"name", tool}, {"arguments", arguments}})
                .value("result")
                .toObject();
    }
    static QString errorOf(const QJsonObject &result)
    {
        return result.value("structuredContent").toObject().value("error").toString();
    }
    static bool succeeded(const QJsonObject &result)
    {
        return !result.value("isError").toBool()
                && result.value("structuredContent").toObject().value("success").toBool();
    }

private Q_SLOTS:
    void initTestCase()
    {
        prepareDaemonDirectory(m_dir,
                               "BASH_ALLOWED_COMMANDS=sleep,echo\nFILE_ALLOWED_EXTENSIONS=txt\n",
                               m_socket, m_customFile);
        if (QTest::currentTestFailed())
            return;
        // One warm job: it is jailed before its call, under the policy of its time.
        m_daemon = std::make_unique<Daemon>();
        QVERIFY2(m_daemon->start(m_dir.path(),
                                 {"--port", "0", "--config", m_customFile, "--set",
                                  "ADMIN_SOCKET=" + m_socket, "--set",
                                  "SANDBOX_ROOT=" + m_dir.filePath("sandbox"), "--set",
                                  "BASH_WARM_JOBS=1", "--set", "PYTHON_WARM_JOBS=0",
                                  // A pool of its own, as in tst_adminchannel.
                                  "--set", "SANDBOX_UID_BASE=126100", "--set",
                                  "SANDBOX_UID_COUNT=50"}),
                 qPrintable(m_daemon->log));
        connectRecordingClient(m_client, m_socket, m_events);
        if (QTest::currentTestFailed())
            return;
        m_mcp.url = QStringLiteral("http://127.0.0.1:%1/mcp").arg(m_daemon->port);
        QVERIFY(m_mcp.initialize("live-settings"));
    }

    // Every setting the table marks live is applied live by the daemon, and no other.
    void theTableSaysWhichApplyLive()
    {
        const QJsonArray config =
                adminRequest(*m_client, admin::methodSnapshot, {}).value("config").toArray();
        QCOMPARE(config.size(), settingSpecs().size());
        for (const QJsonValue &value : config) {
            const QJsonObject setting = value.toObject();
            const SettingSpec *spec = findSettingSpec(setting.value("name").toString());
            QVERIFY(spec);
            QVERIFY2(setting.value("live").toBool() == spec->liveChangeable, spec->name);
        }
    }

    void allowedCommandsApplyToTheNextCall()
    {
        const QJsonObject before = call("system_run_command", {{"command", "ls"}});
        QVERIFY2(errorOf(before).contains("\"ls\" is not an allowed program"),
                 QJsonDocument(before).toJson());
        QElapsedTimer changing;
        changing.start();
        QCOMPARE(set("BASH_ALLOWED_COMMANDS", "sleep,echo,ls"), QString());
        // Resolving the programs again, saving the file, replacing the warm job.
        qInfo("BASH_ALLOWED_COMMANDS changed and applied in %lld ms", changing.elapsed());
        // The warm job was jailed for sleep and echo only: it must have been replaced, or the
        // kernel would refuse to execute ls (exit 126).
        const QJsonObject listed = call("system_run_command", {{"command", "ls -d /"}});
        QVERIFY2(succeeded(listed), QJsonDocument(listed).toJson());
        QCOMPARE(listed.value("structuredContent").toObject().value("stdout").toString(),
                 QStringLiteral("/\n"));

        QCOMPARE(set("BASH_ALLOWED_COMMANDS", "sleep,echo"), QString());
        const QString refusal = errorOf(call("system_run_command", {{"command", "ls"}}));
        QVERIFY2(refusal.contains("\"ls\" is not an allowed program (allowed: sleep, echo)"),
                 qPrintable(refusal));
    }

    void aBadValueChangesNothing()
    {
        QFile custom(m_customFile);
        QVERIFY(custom.open(QIODevice::ReadOnly));
        const QByteArray before = custom.readAll();
        custom.close();
        const QString refused = set("BASH_ALLOWED_COMMANDS", "sleep,no-such-program-here");
        QVERIFY2(refused.startsWith(QLatin1String(admin::errorInvalidValue))
                         && refused.contains("no-such-program-here"),
                 qPrintable(refused));
        QVERIFY(custom.open(QIODevice::ReadOnly));
        QCOMPARE(custom.readAll(), before);
        custom.close();
        // Still the old list: echo runs, and the snapshot shows it.
        QVERIFY(succeeded(call("system_run_command", {{"command", "echo still"}})));
        const QJsonArray config =
                adminRequest(*m_client, admin::methodSnapshot, {}).value("config").toArray();
        QVERIFY(std::any_of(config.begin(), config.end(), [](const QJsonValue &setting) {
            return setting.toObject().value("name").toString() == u"BASH_ALLOWED_COMMANDS"
                    && setting.toObject().value("value").toString() == u"sleep,echo";
        }));
    }

    // A lowered time limit kills the next command; the one already running keeps its limit.
    void aRunningCallKeepsItsTimeLimit()
    {
        m_events.clear();
        std::unique_ptr<QNetworkReply> running(
                m_mcp.callAsync("system_run_command", {{"command", "sleep 2; echo done"}}));
        QVERIFY(waitForEvent(m_events, [](const ReceivedEvent &event) {
            return event.name == QLatin1String(admin::eventCallStarted);
        }));
        QCOMPARE(set("BASH_TIMEOUT_DEFAULT", "1"), QString());
        const QJsonObject limited = call("system_run_command", {{"command", "sleep 3"}});
        const QJsonObject value = limited.value("structuredContent").toObject();
        QVERIFY2(value.value("timed_out").toBool()
                         || value.value("message").toString().contains("time limit of 1 s"),
                 QJsonDocument(limited).toJson());
        QCOMPARE(value.value("timeout_seconds").toInt(), 1);

        QVERIFY(McpClient::wait(running.get(), 10000));
        const QJsonObject first = rpcMessage(running->readAll()).value("result").toObject();
        QVERIFY2(succeeded(first), QJsonDocument(first).toJson());
        QCOMPARE(first.value("structuredContent").toObject().value("timeout_seconds").toInt(), 30);
        QCOMPARE(first.value("structuredContent").toObject().value("stdout").toString(),
                 QStringLiteral("done\n"));
        QCOMPARE(set("BASH_TIMEOUT_DEFAULT", "30"), QString());
    }

    void pythonTimeLimitAppliesToTheNextCall()
    {
        QCOMPARE(set("PYTHON_TIMEOUT_DEFAULT", "1"), QString());
        const QJsonObject limited =
                call("system_run_python", {{"code", "import time\ntime.sleep(3)"}});
        const QJsonObject value = limited.value("structuredContent").toObject();
        QCOMPARE(value.value("timeout_seconds").toInt(), 1);
        QVERIFY2(value.value("message").toString().contains("time limit of 1 s"),
                 QJsonDocument(limited).toJson());
        QCOMPARE(set("PYTHON_TIMEOUT_DEFAULT", "30"), QString());
        const QJsonObject quick = call("system_run_python", {{"code", "_ = 6 * 7"}});
        QVERIFY2(succeeded(quick), QJsonDocument(quick).toJson());
        QCOMPARE(quick.value("structuredContent").toObject().value("timeout_seconds").toInt(), 30);
    }

    void allowedExtensionsApplyToTheNextWrite()
    {
        const QString refusal =
                errorOf(call("file_write", {{"path", "notes.yaml"}, {"content", "a: 1"}}));
        QVERIFY2(refusal.contains("yaml"), qPrintable(refusal));
        QCOMPARE(set("FILE_ALLOWED_EXTENSIONS", "txt,yaml"), QString());
        QVERIFY(succeeded(call("file_write", {{"path", "notes.yaml"}, {"content", "a: 1"}})));
        QCOMPARE(set("FILE_ALLOWED_EXTENSIONS", "txt"), QString());
        QVERIFY(!succeeded(call("file_read", {{"path", "notes.yaml"}})));
        QCOMPARE(set("FILE_MAX_SIZE_MB", "1"), QString());
        const QString tooLarge = errorOf(call(
                "file_write", {{"path", "big.txt"}, {"content", QString(1024 * 1024 + 1, u'x')}}));
        QVERIFY2(tooLarge.contains("FILE_MAX_SIZE_MB"), qPrintable(tooLarge));
    }

    // The egress rules, on a page served here on loopback: no network needed.
    void webRulesApplyToTheNextScrape()
    {
        LoopbackHttpServer page;
        const quint16 port = page.listen();
        QVERIFY(port != 0);
        page.setHandler([](const RecordedRequest &, HttpExchange &exchange) {
            exchange.respond(200, "served on loopback", "text/plain");
        });
        const QString url = QStringLiteral("http://127.0.0.1:%1/page").arg(port);
        QString refusal = errorOf(call("web_scrape", {{"url", url}}));
        QVERIFY2(refusal.contains("WEB_ALLOW_PRIVATE"), qPrintable(refusal));
        QCOMPARE(set("WEB_ALLOW_PRIVATE", "true"), QString());
        const QJsonObject scraped = call("web_scrape", {{"url", url}});
        QVERIFY2(succeeded(scraped), QJsonDocument(scraped).toJson());
        QCOMPARE(scraped.value("structuredContent").toObject().value("content").toString(),
                 QStringLiteral("served on loopback"));

        QCOMPARE(set("WEB_ALLOWED_DOMAINS", "example.org"), QString());
        refusal = errorOf(call("web_scrape", {{"url", url}}));
        QVERIFY2(refusal.contains("WEB_ALLOWED_DOMAINS"), qPrintable(refusal));
        QCOMPARE(page.requests().size(), 1);

        const QString bad = set("WEB_ALLOWED_DOMAINS", "exa mple.org");
        QVERIFY2(bad.startsWith(QLatin1String(admin::errorInvalidValue)), qPrintable(bad));
        QCOMPARE(set("WEB_ALLOWED_DOMAINS", "*"), QString());
        QCOMPARE(set("WEB_MAX_BYTES", "1024"), QString());
        page.setHandler([](const RecordedRequest &, HttpExchange &exchange) {
            exchange.respond(200, QByteArray(4096, 'y'), "text/plain");
        });
        const QJsonObject cut = call("web_scrape", {{"url", url}});
        QVERIFY2(cut.value("structuredContent").toObject().value("truncated").toBool()
                         || errorOf(cut).contains("WEB_MAX_BYTES"),
                 QJsonDocument(cut).toJson());
    }

    void cleanupTestCase()
    {
        m_client.reset();
        if (m_daemon)
            m_daemon->stop();
    }
};

QTEST_GUILESS_MAIN(TestLiveSettings)
#include "tst_livesettings.moc"
