// WarmJobPool against the real cmcp-jail: a job taken is running, waiting for its input, owned by
// the caller and serves one call; the pool starts its replacement once the event loop is back; a
// job that ends while waiting is not replaced until the next take(), so that a machine where
// jobs cannot start does not spin. Runs the real cmcp-jail as root; skips otherwise.

#include "jobs/WarmJobPool.h"
#include "sandbox/JailJob.h"
#include "sandbox/SandboxSupervisor.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

#include <unistd.h>

using namespace cmcp;

namespace {

#define REQUIRE_ROOT()                                                                             \
  do {                                                                                             \
    if (::geteuid() != 0)                                                                          \
      QSKIP("needs root: cmcp-jail switches every job to a host uid of the pool");                 \
  } while (false)

} // namespace

class TestWarmJobPool : public QObject
{
    Q_OBJECT

    QTemporaryDir m_workspace;
    std::unique_ptr<SandboxSupervisor> m_supervisor;

    // `script` under sh in the jail, with the pool's uid, in a workspace every uid may enter.
    JobRequest shell(const QString &script) const
    {
        JobRequest request;
        request.program = QStringLiteral("/bin/sh");
        request.arguments = {QStringLiteral("-c"), script};
        request.policy.workspace = m_workspace.path().toStdString();
        request.policy.env = {{"PATH", "/usr/bin:/bin"}};
        request.policy.layers = {jail::Layer::Identity, jail::Layer::Rlimits, jail::Layer::Seccomp};
        request.policy.limits.processes = 256;
        return request;
    }

private Q_SLOTS:
    void init()
    {
        REQUIRE_ROOT();
        QVERIFY(m_workspace.isValid());
        QVERIFY(QFile::setPermissions(m_workspace.path(),
                                      QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                              | QFileDevice::ExeOwner | QFileDevice::ReadOther
                                              | QFileDevice::ExeOther | QFileDevice::ReadGroup
                                              | QFileDevice::ExeGroup));
        SandboxOptions options;
        options.jailProgram = QStringLiteral(CMCP_JAIL_PATH);
        options.uidBase = 100540;
        options.uidCount = 8;
        options.gid = 100540;
        options.insecure = true;
        m_supervisor = std::make_unique<SandboxSupervisor>(options);
    }

    void cleanup() { m_supervisor.reset(); }

    void aTakenJobServesOneCallForItsCaller()
    {
        WarmJobPool pool(*m_supervisor, shell(QStringLiteral("cat")), 1);
        std::unique_ptr<JailJob> job(pool.take());
        QVERIFY(job);
        QVERIFY(job->isRunning());
        QCOMPARE(job->parent(), nullptr);
        QByteArray output;
        std::optional<JobResult> result;
        connect(job.get(), &JailJob::outputReceived, this,
                [&](JobStream stream, const QByteArray &bytes) {
                    if (stream == JobStream::StandardOutput)
                        output += bytes;
                });
        connect(job.get(), &JailJob::finished, this, [&](const JobResult &r) { result = r; });
        job->provideInput("the call's input\n", 10000);
        QVERIFY(QTest::qWaitFor([&] { return result.has_value(); }, 15000));
        QCOMPARE(result->exitCode, std::optional<int>(0));
        QCOMPARE(output, QByteArray("the call's input\n"));
    }

    void theTakenJobIsReplaced()
    {
        WarmJobPool pool(*m_supervisor, shell(QStringLiteral("cat")), 1);
        std::unique_ptr<JailJob> first(pool.take());
        QVERIFY(first);
        QCOMPARE(pool.findChildren<JailJob *>().size(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(pool.findChildren<JailJob *>().size(), 1, 5000);
        std::unique_ptr<JailJob> second(pool.take());
        QVERIFY(second);
        QVERIFY(second.get() != first.get());
        QVERIFY(first->isRunning() && second->isRunning());
        first->cancel();
        second->cancel();
    }

    void aJobThatEndsWhileWaitingIsReplacedOnlyOnTheNextTake()
    {
        WarmJobPool pool(*m_supervisor, shell(QStringLiteral("exit 3")), 1);
        QCOMPARE(pool.findChildren<JailJob *>().size(), 1);
        // The pool drops the ended job, and would start its replacement in the same step.
        QTRY_COMPARE_WITH_TIMEOUT(pool.findChildren<JailJob *>().size(), 0, 15000);
        QCOMPARE(pool.take(), nullptr);
        QTRY_COMPARE_WITH_TIMEOUT(pool.findChildren<JailJob *>().size(), 1, 5000);
    }
};

QTEST_GUILESS_MAIN(TestWarmJobPool)
#include "tst_warmjobpool.moc"
