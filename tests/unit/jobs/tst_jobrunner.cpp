// JobRunner as its header promises it without running a job: one runner per server, made on
// first use with what the job tools reach through services() (the supervisor, the registry, the
// output handles, and the directory for outputs kept whole, made under SANDBOX_ROOT), and a
// background job's limit is JOB_TIMEOUT_MAX, which a call's timeout may only lower.

#include "common/Settings.h"
#include "jobs/JobRegistry.h"
#include "jobs/JobRunner.h"
#include "jobs/OutputHandleStore.h"
#include "mcp/McpServer.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

using namespace cmcp;

class TestJobRunner : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::optional<Settings> m_settings;
    std::unique_ptr<McpServer> m_mcp;

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        SettingsSources sources;
        sources.commandLine = {{QStringLiteral("SANDBOX_ROOT"), m_dir.filePath("sandbox")},
                               {QStringLiteral("JOB_TIMEOUT_MAX"), QStringLiteral("600")}};
        QString error;
        m_settings = Settings::load(sources, &error);
        QVERIFY2(m_settings, qPrintable(error));
        m_mcp = std::make_unique<McpServer>(ServerIdentity{});
    }

    void cleanup() { m_mcp.reset(); }

    void aServerHasOneRunner()
    {
        JobRunner &runner = JobRunner::of(*m_mcp, *m_settings);
        QCOMPARE(&JobRunner::of(*m_mcp, *m_settings), &runner);
        QCOMPARE(runner.parent(), m_mcp.get());
        McpServer other(ServerIdentity{});
        QVERIFY(&JobRunner::of(other, *m_settings) != &runner);
    }

    void theJobToolsReachWhatTheyNeed()
    {
        const JobServices &services = JobRunner::of(*m_mcp, *m_settings).services();
        QVERIFY(services.supervisor);
        QVERIFY(services.registry);
        QVERIFY(services.handles);
        QCOMPARE(services.timeoutMaxSeconds, 600);
        QVERIFY2(services.fileDirectory.startsWith(m_dir.filePath("sandbox") + u'/'),
                 qPrintable(services.fileDirectory));
        QVERIFY(QFileInfo(services.fileDirectory).isDir());
    }

    void aBackgroundJobsLimitIsTheMaximumACallMayOnlyLower()
    {
        JobRunner &runner = JobRunner::of(*m_mcp, *m_settings);
        QCOMPARE(runner.backgroundTimeoutSeconds(std::nullopt), 600);
        QCOMPARE(runner.backgroundTimeoutSeconds(30), 30);
        QCOMPARE(runner.backgroundTimeoutSeconds(6000), 600);
        // A live change of JOB_TIMEOUT_MAX holds for the next job.
        runner.setTimeoutMaxSeconds(60);
        QCOMPARE(runner.backgroundTimeoutSeconds(std::nullopt), 60);
        QCOMPARE(runner.backgroundTimeoutSeconds(600), 60);
        QCOMPARE(runner.services().timeoutMaxSeconds, 60);
    }
};

QTEST_GUILESS_MAIN(TestJobRunner)
#include "tst_jobrunner.moc"
