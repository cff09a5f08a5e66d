// A command's working directory as the jail gets it: relative, clean, inside the workspace.

#include "managers/BashManager.h"

#include <QTest>

using namespace cmcp;

class TestBashManager : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void workingDirectoriesStayInTheWorkspace()
    {
        QString error;
        QCOMPARE(*workspaceRelativeDirectory(QString(), &error), QString());
        QCOMPARE(*workspaceRelativeDirectory(QStringLiteral("/"), &error), QString());
        QCOMPARE(*workspaceRelativeDirectory(QStringLiteral("/a//b/./c/"), &error),
                 QStringLiteral("a/b/c"));
        QVERIFY(!workspaceRelativeDirectory(QStringLiteral("a/../../b"), &error));
        QVERIFY(error.contains(QLatin1String("leaves the workspace")));
        QVERIFY(!workspaceRelativeDirectory(QStringLiteral(".."), &error));
        QVERIFY(!workspaceRelativeDirectory(QStringLiteral("a") + QChar(0), &error));
    }
};

QTEST_GUILESS_MAIN(TestBashManager)
#include "tst_bashmanager.moc"
