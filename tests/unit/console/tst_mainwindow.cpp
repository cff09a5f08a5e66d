// The console's main window on the offscreen platform: events become rows, the filter and the
// keyboard work, the detail pane follows the selection, and the settings editor shows a bad
// value's problem at its field with the start-up rules.

#include "console/AdminClient.h"
#include "console/CallModel.h"
#include "ConsoleCallEvent.h"
#include "console/ConsoleSession.h"
#include "console/MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTableView>
#include <QTest>

using namespace cmcp;

class TestMainWindow : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void callsFilterDetailAndKeyboard()
    {
        AdminClient client;
        ConsoleSession session(client);
        MainWindow window(session);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        Q_EMIT client.eventReceived(
                "callStarted", {{"call", consoleCallEvent(1, "running", "system_run_command")}});
        Q_EMIT client.eventReceived("callStarted",
                                    {{"call", consoleCallEvent(2, "running", "file_read")}});
        Q_EMIT client.eventReceived("callFinished",
                                    {{"call", consoleCallEvent(2, "succeeded", "file_read")}});
        session.calls().flush();
        QAbstractItemModel *shown = window.callView()->model();
        QCOMPARE(shown->rowCount(), 2);

        QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
        QTRY_VERIFY(window.filterEdit()->hasFocus());
        QTest::keyClicks(window.filterEdit(), "FILE_READ");
        QCOMPARE(shown->rowCount(), 1);
        QCOMPARE(shown->index(0, CallModel::ToolColumn).data().toString(),
                 QStringLiteral("file_read"));
        QTest::keyClicks(window.filterEdit(), "x");
        QCOMPARE(shown->rowCount(), 0);
        window.filterEdit()->clear();
        QCOMPARE(shown->rowCount(), 2);

        window.callView()->setFocus();
        window.callView()->setCurrentIndex(shown->index(1, 0));
        auto *detail = window.findChild<QPlainTextEdit *>("callDetail");
        QVERIFY(detail);
        QVERIFY(detail->toPlainText().contains("Call 2: file_read"));

        QApplication::clipboard()->clear();
        QTest::keyClick(window.callView(), Qt::Key_C, Qt::ControlModifier);
        QVERIFY2(QApplication::clipboard()->text().contains("\"callId\": 2"),
                 qPrintable(QApplication::clipboard()->text()));

        // Ctrl+C in the filter copies its text, not the call.
        window.filterEdit()->setText("typed");
        window.filterEdit()->selectAll();
        window.filterEdit()->setFocus();
        QTest::keyClick(window.filterEdit(), Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("typed"));

        // Disconnected, cancelling is offered nowhere.
        const auto actions = window.callView()->actions();
        const auto cancel = std::find_if(actions.begin(), actions.end(), [](QAction *action) {
            return action->shortcut() == QKeySequence(QKeySequence::Delete);
        });
        QVERIFY(cancel != actions.end());
        QVERIFY(!(*cancel)->isEnabled());
    }

    void settingsEditorShowsProblemsAtTheField()
    {
        AdminClient client;
        ConsoleSession session(client);
        MainWindow window(session);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        session.applySnapshot({{"config",
                                QJsonArray{QJsonObject{{"name", "BASH_TIMEOUT_MAX"},
                                                       {"group", "Bash"},
                                                       {"type", "integer"},
                                                       {"value", "120"},
                                                       {"origin", "default file"},
                                                       {"help", "Largest time limit."},
                                                       {"allowed", "1..3600"},
                                                       {"live", false}},
                                           QJsonObject{{"name", "LOG_LEVEL"},
                                                       {"group", "Server"},
                                                       {"type", "choice"},
                                                       {"value", "info"},
                                                       {"origin", "built-in default"},
                                                       {"help", "Level."},
                                                       {"choices", QJsonArray{"debug", "info"}},
                                                       {"live", true}}}}});
        auto *edit = window.findChild<QLineEdit *>("BASH_TIMEOUT_MAX");
        QVERIFY(edit);
        QCOMPARE(edit->text(), QStringLiteral("120"));
        auto *message = window.findChild<QLabel *>("BASH_TIMEOUT_MAX-message");
        QVERIFY(message);
        QVERIFY(message->text().isEmpty());
        edit->setFocus();
        QTest::keyClicks(edit, "0000");
        QVERIFY2(message->text().contains("between 1 and 3600"), qPrintable(message->text()));
        QTest::keyClick(edit, Qt::Key_Backspace);
        QTest::keyClick(edit, Qt::Key_Backspace);
        QTest::keyClick(edit, Qt::Key_Backspace);
        QTest::keyClick(edit, Qt::Key_Backspace);
        QVERIFY(message->text().isEmpty());
        // Applying a bad value never reaches the daemon: the problem stays at the field.
        edit->setText("soon");
        QTest::keyClick(edit, Qt::Key_Return);
        QVERIFY(message->text().contains("must be an integer"));
        QVERIFY(window.findChild<QWidget *>("LOG_LEVEL"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
