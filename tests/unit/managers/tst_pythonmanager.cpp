// The checks on the Python runner's result channel: only what follows the nonce counts.

#include "managers/PythonManager.h"

#include <QJsonArray>
#include <QTest>

using namespace cmcp;

class TestPythonManager : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void pythonResultNeedsTheNonce()
    {
        JobResult result;
        result.channel = "abc\n{\"ran\": true, \"raised\": false, \"exit_status\": null, "
                         "\"result\": [1, 2], \"repr\": false}";
        PythonOutcome outcome = PythonManager::outcome(result, "abc");
        QVERIFY(outcome.channelProblem.isEmpty());
        QVERIFY(outcome.ranToEnd);
        QCOMPARE(outcome.result, QJsonValue(QJsonArray{1, 2}));

        outcome = PythonManager::outcome(result, "abd");
        QVERIFY(outcome.channelProblem.contains(QLatin1String("something other")));
        QCOMPARE(outcome.result, QJsonValue(QJsonValue::Null));

        result.channel.prepend("forged\n{}");
        outcome = PythonManager::outcome(result, "abc");
        QVERIFY(!outcome.channelProblem.isEmpty());
        QVERIFY(!outcome.ranToEnd);

        result.channel = "abc\nnot json";
        QVERIFY(PythonManager::outcome(result, "abc")
                        .channelProblem.contains(QLatin1String("JSON")));

        result.channel.clear();
        outcome = PythonManager::outcome(result, "abc");
        QVERIFY(outcome.channelProblem.isEmpty());
        QVERIFY(!outcome.ranToEnd);

        result.channel = "abc\n{}";
        result.channelOverflowed = true;
        QVERIFY(PythonManager::outcome(result, "abc")
                        .channelProblem.contains(QLatin1String("larger")));
    }
};

QTEST_GUILESS_MAIN(TestPythonManager)
#include "tst_pythonmanager.moc"
