// describeCall: what the admin channel sends (and keeps for new consoles) of one tool call.
// Arguments are redacted, then long strings cut, so that a call with megabytes of arguments
// (a file_write's content) stays a small event and a small entry of the kept history.

#include "admin/CallDescription.h"

#include <QJsonArray>
#include <QTest>

using namespace cmcp;

class TestCallDescription : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void longArgumentStringsAreCut()
    {
        ToolCallRecord call;
        call.tool = QStringLiteral("file_write");
        const QString content(1024 * 1024, u'x');
        call.arguments = {{"path", "big.txt"},
                          {"content", content},
                          {"nested", QJsonArray{QJsonObject{{"text", content}}}}};
        const QJsonObject arguments =
                describeCall(call, false, nullptr).toJson().value("arguments").toObject();
        QCOMPARE(arguments.value("path").toString(), QStringLiteral("big.txt"));
        const QString cut = arguments.value("content").toString();
        QCOMPARE(cut, QString(4096, u'x') + QStringLiteral("… (1048576 characters)"));
        QCOMPARE(arguments.value("nested").toArray().first().toObject().value("text").toString(),
                 cut);
    }

    void stringsUpToTheLimitStayWhole()
    {
        ToolCallRecord call;
        const QString edge(4096, u'y');
        call.arguments = {{"content", edge}};
        QCOMPARE(describeCall(call, false, nullptr)
                         .toJson()
                         .value("arguments")
                         .toObject()
                         .value("content")
                         .toString(),
                 edge);
    }

    // The cut must not reveal a long secret's beginning: secrets are masked first.
    void secretsAreRedactedBeforeTheCut()
    {
        ToolCallRecord call;
        call.arguments = {{"api_key", QString(10000, u's')}, {"user", "ann"}};
        const QJsonObject arguments =
                describeCall(call, true, nullptr).toJson().value("arguments").toObject();
        QCOMPARE(arguments.value("api_key").toString(), QStringLiteral("********"));
        QCOMPARE(arguments.value("user").toString(), QStringLiteral("ann"));
    }
};

QTEST_GUILESS_MAIN(TestCallDescription)
#include "tst_calldescription.moc"
