// The admin channel's typed records (common/Admin*Records): each reads what it writes, and writes
// the fields the protocol has always had, so that a daemon and a console of different builds
// still understand each other.

#include "common/AdminCallRecords.h"
#include "common/AdminLogRecords.h"
#include "common/AdminSessionRecords.h"
#include "common/AdminSettingRecords.h"
#include "common/AdminSnapshotRecords.h"

#include <QJsonArray>
#include <QTest>

using namespace cmcp::admin;

namespace {

QJsonObject finishedCall()
{
    return {{"callId", 12},
            {"sessionId", "s-1"},
            {"transport", "stdio"},
            {"clientName", "tester"},
            {"tool", "system_run_command"},
            {"arguments", QJsonObject{{"command", "ls"}}},
            {"startedAt", "2026-01-01T10:00:00.123Z"},
            {"status", "failed"},
            {"durationMs", 40},
            {"detail", "exit status 2"},
            {"outputHead", "first"},
            {"outputTail", "last"}};
}

QJsonObject setting()
{
    return {{"name", "LOG_LEVEL"},
            {"group", "Server"},
            {"type", "choice"},
            {"value", "info"},
            {"origin", "built-in default"},
            {"help", "Level."},
            {"allowed", "one of"},
            {"choices", QJsonArray{"debug", "info"}},
            {"live", true},
            {"secret", false}};
}

} // namespace

class TestAdminRecords : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void callsRoundTrip()
    {
        QCOMPARE(CallRecord::fromJson(finishedCall()).toJson(), finishedCall());
        QJsonObject running = finishedCall();
        for (const char *key : {"durationMs", "detail", "outputHead", "outputTail"})
            running.remove(QLatin1String(key));
        running.insert("status", "running");
        running.insert("elapsedMs", 2500);
        running.insert("outputBytes", 4096);
        const CallRecord call = CallRecord::fromJson(running);
        QVERIFY(call.isRunning());
        QVERIFY(call.figures);
        QCOMPARE(call.figures->outputBytes, 4096);
        QCOMPARE(call.toJson(), running);
        QJsonObject structured = finishedCall();
        structured.remove("outputHead");
        structured.remove("outputTail");
        structured.insert("accounting", QJsonObject{{"exit_code", 2}});
        QCOMPARE(CallRecord::fromJson(structured).toJson(), structured);

        const QJsonObject progress{{"callId", 12}, {"elapsedMs", 250}, {"outputBytes", 7}};
        QCOMPARE(ProgressRecord::fromJson(progress).toJson(), progress);
        const QJsonObject started{{"call", running}};
        QCOMPARE(CallStartedEvent::fromJson(started).toJson(), started);
    }

    // A missing field reads as its default: a console ignores what a daemon leaves out.
    void missingFieldsReadAsDefaults()
    {
        const CallRecord call = CallRecord::fromJson({{"callId", 3}});
        QCOMPARE(call.callId, 3);
        QVERIFY(call.status.isEmpty());
        QVERIFY(!call.durationMs && !call.figures && !call.accounting && !call.outputHead);
        const SettingRecord partial = SettingRecord::fromJson({{"name", "X"}});
        QCOMPARE(partial.name, QStringLiteral("X"));
        QVERIFY(partial.choices.isEmpty());
        QVERIFY(!partial.live);
    }

    void requestParamsAreChecked()
    {
        QCOMPARE(CancelCallParams::fromJson({{"callId", 4}})->callId, 4);
        QVERIFY(!CancelCallParams::fromJson({{"callId", "4"}}));
        QVERIFY(!CancelCallParams::fromJson({{"callId", 0}}));
        QVERIFY(!CancelCallParams::fromJson({}));
        QCOMPARE(CancelCallParams{9}.toJson(), (QJsonObject{{"callId", 9}}));

        QCOMPARE(CloseSessionParams::fromJson({{"sessionId", "s"}})->sessionId,
                 QStringLiteral("s"));
        QVERIFY(!CloseSessionParams::fromJson({{"sessionId", ""}}));
        QVERIFY(!CloseSessionParams::fromJson({{"sessionId", 5}}));

        const auto change = SetSettingParams::fromJson({{"name", "A"}, {"value", ""}});
        QVERIFY(change);
        QCOMPARE(change->toJson(), (QJsonObject{{"name", "A"}, {"value", ""}}));
        QVERIFY(!SetSettingParams::fromJson({{"name", "A"}, {"value", 1}}));
        QVERIFY(!SetSettingParams::fromJson({{"value", "1"}}));

        QCOMPARE(SubscribeLogParams{"info"}.toJson(), (QJsonObject{{"level", "info"}}));
    }

    void settingsSessionsAndLogRoundTrip()
    {
        QCOMPARE(SettingRecord::fromJson(setting()).toJson(), setting());
        const QJsonObject changed{{"setting", setting()}};
        QCOMPARE(SettingChangedEvent::fromJson(changed).toJson(), changed);
        const QJsonObject result{{"setting", setting()},
                                 {"appliedLive", true},
                                 {"restartRequired", false},
                                 {"note", ""}};
        QCOMPARE(SetSettingResult::fromJson(result).toJson(), result);

        const QJsonObject session{{"sessionId", "s-1"},
                                  {"transport", "sse"},
                                  {"clientName", "c"},
                                  {"openedAt", "2026-01-01T10:00:00.000Z"},
                                  {"calls", 3}};
        QCOMPARE(SessionRecord::fromJson(session).toJson(), session);
        const QJsonObject opened{{"sessionId", "s-1"},
                                 {"transport", "sse"},
                                 {"openedAt", "2026-01-01T10:00:00.000Z"}};
        QCOMPARE(SessionOpenedEvent::fromJson(opened).toJson(), opened);
        const QJsonObject closed{{"sessionId", "s-1"}, {"reason", "closed by an administrator"}};
        QCOMPARE(SessionClosedEvent::fromJson(closed).toJson(), closed);

        const QJsonObject line{{"level", "info"},
                               {"logger", "cmcpd"},
                               {"text", "hello"},
                               {"time", "2026-01-01T10:00:00.000Z"}};
        QCOMPARE(LogLineEvent::fromJson(line).toJson(), line);
        QCOMPARE(SubscribeLogResult::fromJson({{"level", "off"}}).level, QStringLiteral("off"));
    }

    void snapshotRoundTrips()
    {
        const QJsonObject counters{{"sessionsOpen", 1},  {"callsStarted", 5}, {"callsFinished", 4},
                                   {"callsInFlight", 1}, {"callsFailed", 2},  {"eventsDropped", 0},
                                   {"peersRefused", 1}};
        QCOMPARE(CountersRecord::fromJson(counters).toJson(), counters);
        QJsonObject withTemplates = counters;
        withTemplates.insert(
                "templates",
                QJsonObject{{"enabled", true},
                            {"command", QJsonObject{{"state", "running"}, {"calls", 3}}}});
        QCOMPARE(CountersRecord::fromJson(withTemplates).toJson(), withTemplates);
        const QJsonObject sandbox{
                {"layers",
                 QJsonObject{{"seccomp", QJsonObject{{"state", "available"}, {"detail", "on"}}},
                             {"landlock",
                              QJsonObject{{"state", "unavailable"},
                                          {"detail", ""},
                                          {"reason", "ENOSYS"},
                                          {"abi", 0}}}}},
                {"root", true},
                {"order", QJsonArray{"seccomp", "landlock"}}};
        const SandboxReport report = SandboxReport::fromJson(sandbox);
        QCOMPARE(report.toJson(), sandbox);
        const QList<SandboxLayerRecord> layers = report.layers();
        QCOMPARE(layers.size(), 2);
        QCOMPARE(layers.at(0).name, QStringLiteral("seccomp")); // in the jail's order
        QCOMPARE(layers.at(1).reason, QStringLiteral("ENOSYS"));
        QCOMPARE(layers.at(1).reported.value("abi").toInt(), 0);

        QJsonObject running = finishedCall();
        running.insert("status", "running");
        const QJsonObject snapshot{{"sessions", QJsonArray{}},
                                   {"calls", QJsonArray{running}},
                                   {"recentCalls", QJsonArray{finishedCall()}},
                                   {"config", QJsonArray{setting()}},
                                   {"customEnvFile", "/etc/cmcp/custom.env"},
                                   {"sandbox", sandbox},
                                   {"counters", counters}};
        QCOMPARE(SnapshotRecord::fromJson(snapshot).toJson(), snapshot);
        const QJsonObject dropped{{"count", 3}, {"total", 10}};
        QCOMPARE(DroppedEvent::fromJson(dropped).toJson(), dropped);
    }
};

QTEST_GUILESS_MAIN(TestAdminRecords)
#include "tst_adminrecords.moc"
