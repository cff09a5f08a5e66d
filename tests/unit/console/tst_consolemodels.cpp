// The console's models: the live call table (batched, bounded) and the session list.

#include "console/CallDetail.h"
#include "console/CallModel.h"
#include "ConsoleCallEvent.h"
#include "console/SessionModel.h"
#include "console/WorkspaceModel.h"

#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

using namespace cmcp;

class TestConsoleModels : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void callsArriveInOneBatch()
    {
        CallModel model;
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        for (int i = 1; i <= 3000; ++i)
            model.enqueue(consoleCall(i, "running"));
        QCOMPARE(model.rowCount(), 0); // nothing until the batch is applied
        model.flush();
        QCOMPARE(model.rowCount(), 3000);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.rowOfCall(1234), 1233);
    }

    void batchAppliesItselfOnItsTimer()
    {
        CallModel model;
        model.setBatchInterval(10);
        model.enqueue(consoleCall(1, "running"));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 5000);
    }

    void finishUpdatesTheRowOfItsCall()
    {
        CallModel model;
        model.enqueue(consoleCall(1, "running"));
        model.enqueue(consoleCall(2, "running"));
        model.flush();
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.enqueue(consoleCall(1, "failed"));
        model.flush();
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(changed.count(), 1);
        const QModelIndex status = model.index(0, CallModel::StatusColumn);
        QCOMPARE(status.data(CallModel::StatusRole).toString(), QStringLiteral("failed"));
        QCOMPARE(status.data().toString(), QStringLiteral("failed"));
        QVERIFY(status.data(Qt::ForegroundRole).isValid());
        QCOMPARE(model.index(0, CallModel::DurationColumn).data().toString(),
                 QStringLiteral("12 ms"));
        QCOMPARE(model.index(1, CallModel::DurationColumn).data().toString(), QString());
    }

    // A running call's row shows its progress; its end replaces it with the duration, and
    // progress arriving after the end changes nothing.
    void progressUpdatesTheRowOfARunningCall()
    {
        CallModel model;
        model.enqueue(consoleCall(1, "running", "system_run_command"));
        model.enqueue(consoleCall(2, "running"));
        model.flush();
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.enqueueProgress(admin::ProgressRecord::fromJson(
                {{"callId", 1}, {"elapsedMs", 2500}, {"outputBytes", 2048}}));
        model.enqueueProgress(admin::ProgressRecord::fromJson(
                {{"callId", 1}, {"elapsedMs", 2750}, {"outputBytes", 4096}}));
        QCOMPARE(changed.count(), 0); // batched
        model.flush();
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.index(0, CallModel::DurationColumn).data().toString(),
                 QStringLiteral("2.8 s · 4.0 kB"));
        QCOMPARE(model.index(1, CallModel::DurationColumn).data().toString(), QString());
        const QString detail = callDetailText(model.call(0));
        QVERIFY2(detail.contains("2.8 s so far, 4096 bytes of output"), qPrintable(detail));

        model.enqueue(consoleCall(1, "succeeded", "system_run_command"));
        model.flush();
        model.enqueueProgress(admin::ProgressRecord::fromJson(
                {{"callId", 1}, {"elapsedMs", 3000}, {"outputBytes", 8192}}));
        model.enqueueProgress(admin::ProgressRecord::fromJson(
                {{"callId", 99}, {"elapsedMs", 3000}, {"outputBytes", 1}}));
        model.flush();
        QCOMPARE(model.index(0, CallModel::DurationColumn).data().toString(),
                 QStringLiteral("12 ms"));
        QCOMPARE(model.rowCount(), 2);
    }

    void progressInTheBatchOfItsStartApplies()
    {
        CallModel model;
        model.enqueue(consoleCall(3, "running"));
        model.enqueueProgress(admin::ProgressRecord::fromJson(
                {{"callId", 3}, {"elapsedMs", 300}, {"outputBytes", 10}}));
        model.flush();
        QCOMPARE(model.index(0, CallModel::DurationColumn).data().toString(),
                 QStringLiteral("0.3 s · 10 bytes"));
    }

    void startAndFinishInOneBatchMakeOneRow()
    {
        CallModel model;
        model.enqueue(consoleCall(5, "running"));
        model.enqueue(consoleCall(5, "succeeded"));
        model.flush();
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0, 0).data(CallModel::StatusRole).toString(),
                 QStringLiteral("succeeded"));
    }

    void historyIsBounded()
    {
        CallModel model;
        model.setMaxCalls(100);
        for (int i = 1; i <= 250; ++i) {
            model.enqueue(consoleCall(i, "succeeded"));
            if (i % 40 == 0)
                model.flush();
        }
        model.flush();
        QCOMPARE(model.rowCount(), 100);
        QCOMPARE(model.index(0, 0).data(CallModel::CallIdRole).toLongLong(), 151);
        QCOMPARE(model.rowOfCall(150), -1);
        QCOMPARE(model.rowOfCall(250), 99);
        // A late update of a forgotten call comes back as a new row, still within the bound.
        model.enqueue(consoleCall(3, "cancelled"));
        model.flush();
        QCOMPARE(model.rowCount(), 100);
        QCOMPARE(model.rowOfCall(3), 99);
    }

    void resetSortsAndBounds()
    {
        CallModel model;
        model.setMaxCalls(2);
        model.reset(
                {consoleCall(9, "running"), consoleCall(3, "succeeded"), consoleCall(7, "failed")});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.rowOfCall(3), -1); // the newest two, in call order
        QCOMPARE(model.rowOfCall(7), 0);
        QCOMPARE(model.rowOfCall(9), 1);
    }

    void columns()
    {
        CallModel model;
        model.enqueue(consoleCall(1, "succeeded", "system_run_command"));
        model.flush();
        QCOMPARE(model.index(0, CallModel::SessionColumn).data().toString(),
                 QStringLiteral("abcdef01"));
        QCOMPARE(model.index(0, CallModel::ToolColumn).data().toString(),
                 QStringLiteral("system_run_command"));
        QCOMPARE(model.index(0, CallModel::ArgumentsColumn).data().toString(),
                 QStringLiteral("path=\"notes.txt\""));
        QCOMPARE(model.index(0, CallModel::StatusColumn).data().toString(), QStringLiteral("ok"));
        QCOMPARE(model.headerData(CallModel::ToolColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Tool"));
    }

    void shortArgumentsAreCut()
    {
        const QString text =
                CallModel::shortArguments({{"command", QString(500, u'x')}, {"timeout", 5}}, 40);
        QCOMPARE(text.size(), 40);
        QVERIFY(text.endsWith(u'…'));
        QCOMPARE(CallModel::shortArguments({{"a", "one\n  two"}, {"b", 5}}),
                 QStringLiteral("a=\"one two\", b=5"));
    }

    void detailShowsEverything()
    {
        QJsonObject finished = consoleCallEvent(4, "failed", "system_run_command");
        finished.insert("detail", "exit status 2");
        finished.insert("accounting", QJsonObject{{"exit_code", 2}});
        finished.insert("outputHead", "first part");
        finished.insert("outputTail", "last part");
        const QString text = callDetailText(admin::CallRecord::fromJson(finished));
        for (const char *expected :
             {"Call 4", "system_run_command", "abcdef0123456789", "client", "12 ms",
              "exit status 2", "notes.txt", "exit_code", "first part", "last part"})
            QVERIFY2(text.contains(QLatin1String(expected)), expected);
    }

    void sessions()
    {
        SessionModel model;
        model.reset({admin::SessionRecord::fromJson({{"sessionId", "s1"},
                                                     {"transport", "streamable-http"},
                                                     {"clientName", "a"},
                                                     {"calls", 3},
                                                     {"openedAt", "2026-01-01T10:00:00.000Z"}})});
        QCOMPARE(model.rowCount(), 1);
        model.opened(
                admin::SessionOpenedEvent::fromJson({{"sessionId", "s2"},
                                                     {"transport", "sse"},
                                                     {"openedAt", "2026-01-01T10:00:00.000Z"}}));
        model.opened(admin::SessionOpenedEvent::fromJson(
                {{"sessionId", "s2"}, {"transport", "sse"}})); // duplicates are ignored
        QCOMPARE(model.rowCount(), 2);
        model.callStarted("s2", "inspector");
        model.callStarted("s2", "inspector");
        QCOMPARE(model.index(1, SessionModel::ClientColumn).data().toString(),
                 QStringLiteral("inspector"));
        QCOMPARE(model.index(1, SessionModel::CallsColumn).data().toInt(), 2);
        model.setNow(QDateTime::fromString("2026-01-01T11:30:00.000Z", Qt::ISODateWithMs));
        QCOMPARE(model.index(0, SessionModel::AgeColumn).data().toString(),
                 QStringLiteral("1 h 30 min"));
        model.closed("s1");
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0, 0).data(SessionModel::SessionIdRole).toString(),
                 QStringLiteral("s2"));
        model.closed("unknown");
        QCOMPARE(model.rowCount(), 1);
    }

    // A listWorkspaces reply as the view shows it: what cannot be measured says so.
    void workspaces()
    {
        WorkspaceModel model;
        const auto reply = admin::ListWorkspacesResult::fromJson(
                {{"workspaces",
                  QJsonArray{QJsonObject{{"kind", "named"},
                                         {"workspaceId", "ws_0123"},
                                         {"name", "build"},
                                         {"owner", "carol"},
                                         {"usedBytes", 3000000},
                                         {"quotaBytes", 32000000},
                                         {"checkpoints", 2},
                                         {"lastUsed", "2026-01-01T10:00:00.000Z"},
                                         {"jobsRunning", 1}},
                             QJsonObject{{"kind", "shared"},
                                         {"workspaceId", "workspace"},
                                         {"name", "shared"},
                                         {"usedBytes", QJsonValue::Null},
                                         {"quotaBytes", 0},
                                         {"checkpoints", QJsonValue::Null}}}}});
        model.reset(reply.workspaces);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, WorkspaceModel::OwnerColumn).data().toString(),
                 QStringLiteral("carol"));
        QCOMPARE(model.index(0, WorkspaceModel::SizeColumn).data().toString(),
                 QStringLiteral("3.0 MB of 32 MB"));
        QCOMPARE(model.index(0, WorkspaceModel::CheckpointsColumn).data().toString(),
                 QStringLiteral("2"));
        QCOMPARE(model.index(0, WorkspaceModel::JobsColumn).data().toInt(), 1);
        QCOMPARE(model.index(0, 0).data(WorkspaceModel::WorkspaceIdRole).toString(),
                 QStringLiteral("ws_0123"));
        QVERIFY(!model.index(0, WorkspaceModel::LastUsedColumn).data().toString().isEmpty());
        QCOMPARE(model.index(1, WorkspaceModel::OwnerColumn).data().toString(),
                 QStringLiteral("(everyone)"));
        QCOMPARE(model.index(1, WorkspaceModel::SizeColumn).data().toString(), QStringLiteral("—"));
        QCOMPARE(model.index(1, WorkspaceModel::CheckpointsColumn).data().toString(),
                 QStringLiteral("—"));
        QCOMPARE(model.index(1, 0).data(WorkspaceModel::KindRole).toString(),
                 QStringLiteral("shared"));
    }
};

QTEST_MAIN(TestConsoleModels)
#include "tst_consolemodels.moc"
