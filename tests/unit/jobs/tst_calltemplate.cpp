// CallTemplate against the real cmcp-jail --serve-template with bash and the zygote builtin, as
// BashManager::templateJob asks for it: it keeps its spare cells idle, a call takes one, runs in
// it and gives it back for the next call while the spare is made again; a template that ends
// hands out no cell (calls start cold) and is started again on a later call, not before its
// pause; a retired template takes no call and deletes itself once no call runs; a template whose
// cells cannot start hands out no cell. Needs what templates need (root, the zygote library beside
// cmcp-jail); skips, saying which, otherwise.

#include "jail/protocol/CellProtocol.h"
#include "jobs/CallTemplate.h"
#include "sandbox/ForkedJob.h"
#include "sandbox/JailJob.h"
#include "sandbox/SandboxSupervisor.h"
#include "sandbox/TemplateCell.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QPointer>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

using namespace cmcp;

class TestCallTemplate : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<SandboxSupervisor> m_supervisor;

    QString workspace() const { return m_dir.filePath(QStringLiteral("workspace")); }
    QString socketPath() const { return m_dir.filePath(QStringLiteral("bash.template")); }

    JobRequest bashTemplate(const QString &program = QStringLiteral("/bin/bash")) const
    {
        JobRequest request;
        request.program = program;
        request.arguments = {
                QStringLiteral("--norc"), QStringLiteral("--noprofile"), QStringLiteral("-c"),
                QStringLiteral("umask 002; enable -f /proc/self/fd/%1 cmcp_zygote && cmcp_zygote")
                        .arg(cell_protocol::kZygoteLibraryFd)};
        request.policy.workspace = workspace().toStdString();
        request.policy.env = {{"PATH", "/usr/bin:/bin"}};
        request.policy.layers = {jail::Layer::Identity, jail::Layer::Namespaces,
                                 jail::Layer::Rlimits, jail::Layer::Seccomp};
        request.policy.namespaces = jail::NamespacesPolicy{};
        request.policy.limits.processes = 256;
        return request;
    }

    static QJsonObject cells(const CallTemplate &callTemplate)
    {
        return callTemplate.status().value(u"cells").toObject();
    }

    struct Ran
    {
        QByteArray output;
        std::optional<JobResult> result;
    };

    // `command` as one call of `principal` on `cell`, taken from `callTemplate`, as
    // JobRunner::runForked runs it; `ran` fills in as it runs.
    ForkedJob *startCall(CallTemplate &callTemplate, TemplateCell *cell, const QString &command,
                         Ran &ran)
    {
        JobRequest request = bashTemplate();
        request.principal = QStringLiteral("alice");
        request.standardInput = command.toUtf8();
        request.timeoutMs = 15000;
        ForkedJob *job = m_supervisor->createForkedJob(request, cell, cell->takeLease(), this);
        callTemplate.adopt(job, cell);
        connect(job, &Job::outputReceived, this, [&ran](JobStream stream, const QByteArray &bytes) {
            if (stream == JobStream::StandardOutput)
                ran.output += bytes;
        });
        connect(job, &Job::finished, this,
                [&ran](const JobResult &result) { ran.result = result; });
        job->start();
        return job;
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("workspace")));
        for (const QString &path : {m_dir.path(), workspace()})
            QVERIFY(QFile::setPermissions(path,
                                          QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                                  | QFileDevice::ExeOwner | QFileDevice::ReadOther
                                                  | QFileDevice::ExeOther | QFileDevice::ReadGroup
                                                  | QFileDevice::ExeGroup));
        SandboxOptions options;
        options.jailProgram = QStringLiteral(CMCP_JAIL_PATH);
        options.uidBase = 100560;
        options.uidCount = 8;
        options.gid = 100560;
        options.insecure = true;
        if (const QString why = options.templatesUnavailable(); !why.isEmpty())
            QSKIP(qPrintable(QStringLiteral("templates cannot run here: ") + why));
        m_supervisor = std::make_unique<SandboxSupervisor>(options);
    }

    void cleanup() { m_supervisor.reset(); }

    void itKeepsItsSpareCellsIdle()
    {
        CallTemplate callTemplate(*m_supervisor, bashTemplate(), socketPath(), 2);
        QTRY_COMPARE_WITH_TIMEOUT(cells(callTemplate).value(u"idle").toInt(), 2, 20000);
        QCOMPARE(callTemplate.status().value(u"state").toString(), QStringLiteral("running"));
        QCOMPARE(callTemplate.status().value(u"starts").toInt(), 1);
        QCOMPARE(cells(callTemplate).value(u"made").toInt(), 2);
    }

    void aCallTakesACellAndTheSpareIsMadeAgain()
    {
        CallTemplate callTemplate(*m_supervisor, bashTemplate(), socketPath(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(cells(callTemplate).value(u"idle").toInt(), 1, 20000);
        TemplateCell *cell = callTemplate.takeCell(QStringLiteral("alice"));
        QVERIFY(cell);
        QVERIFY(cell->isArmed());
        QCOMPARE(cells(callTemplate).value(u"busy").toInt(), 1);
        QCOMPARE(callTemplate.status().value(u"calls").toInt(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(cells(callTemplate).value(u"idle").toInt(), 1, 20000);
        QCOMPARE(cells(callTemplate).value(u"made").toInt(), 2);
        TemplateCell *next = callTemplate.takeCell(QStringLiteral("bob"));
        QVERIFY(next);
        QVERIFY(next != cell);
    }

    // The call's output and exit come back through the cell, which then waits for the next
    // call, armed again: no cell beyond the spare one is made for a second call.
    void aCallRunsInItsCellWhichServesTheNextCall()
    {
        CallTemplate callTemplate(*m_supervisor, bashTemplate(), socketPath(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(cells(callTemplate).value(u"idle").toInt(), 1, 20000);
        TemplateCell *cell = callTemplate.takeCell(QStringLiteral("alice"));
        QVERIFY(cell);
        Ran ran;
        startCall(callTemplate, cell, QStringLiteral("echo \"forked $((6 * 7))\"; exit 3"), ran);
        QTRY_VERIFY_WITH_TIMEOUT(ran.result.has_value(), 20000);
        QCOMPARE(ran.output, QByteArray("forked 42\n"));
        QCOMPARE(ran.result->exitCode, std::optional<int>(3));
        QTRY_COMPARE_WITH_TIMEOUT(cells(callTemplate).value(u"idle").toInt(), 2, 20000);
        QCOMPARE(cells(callTemplate).value(u"busy").toInt(), 0);
        QCOMPARE(cells(callTemplate).value(u"made").toInt(), 2);
        // Both idle cells are armed again: two calls take them without a third being made.
        TemplateCell *first = callTemplate.takeCell(QStringLiteral("alice"));
        TemplateCell *second = callTemplate.takeCell(QStringLiteral("bob"));
        QVERIFY(first && second && first != second);
        QVERIFY(first == cell || second == cell);
        QVERIFY(first->isArmed() && second->isArmed());
    }

    // Ended from outside: its cells die with it, calls start cold, and the next call after the
    // pause starts it again.
    void aTemplateThatEndsIsStartedAgainOnALaterCall()
    {
        CallTemplate callTemplate(*m_supervisor, bashTemplate(), socketPath(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(cells(callTemplate).value(u"idle").toInt(), 1, 20000);
        auto *monitor = callTemplate.findChild<JailJob *>();
        QVERIFY(monitor);
        monitor->cancel();
        QTRY_COMPARE_WITH_TIMEOUT(callTemplate.status().value(u"state").toString(),
                                  QStringLiteral("stopped"), 20000);
        QVERIFY(!callTemplate.status().value(u"last_end").toString().isEmpty());
        QCOMPARE(cells(callTemplate).value(u"idle").toInt(), 0);
        // Within the pause a call starts cold and does not start the template again.
        QCOMPARE(callTemplate.takeCell(QStringLiteral("alice")), nullptr);
        QCOMPARE(callTemplate.status().value(u"starts").toInt(), 1);
        QCOMPARE(callTemplate.status().value(u"state").toString(), QStringLiteral("stopped"));
        // A call after the pause starts it again.
        QTRY_VERIFY_WITH_TIMEOUT((callTemplate.takeCell(QStringLiteral("alice")),
                                  callTemplate.status().value(u"starts").toInt() == 2),
                                 20000);
        QTRY_COMPARE_WITH_TIMEOUT(cells(callTemplate).value(u"idle").toInt(), 1, 20000);
        QCOMPARE(callTemplate.status().value(u"state").toString(), QStringLiteral("running"));
        TemplateCell *cell = callTemplate.takeCell(QStringLiteral("alice"));
        QVERIFY(cell);
        QVERIFY(cell->isArmed());
    }

    void aRetiredTemplateTakesNoCallAndEnds()
    {
        QPointer<CallTemplate> callTemplate =
                new CallTemplate(*m_supervisor, bashTemplate(), socketPath(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(cells(*callTemplate).value(u"idle").toInt(), 1, 20000);
        callTemplate->retire();
        QCOMPARE(callTemplate->takeCell(QStringLiteral("alice")), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(callTemplate.isNull(), 5000);
    }

    // A call in flight keeps a retired template until it has ended.
    void aRetiredTemplateEndsOnlyAfterItsCalls()
    {
        QPointer<CallTemplate> callTemplate =
                new CallTemplate(*m_supervisor, bashTemplate(), socketPath(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(cells(*callTemplate).value(u"idle").toInt(), 1, 20000);
        TemplateCell *cell = callTemplate->takeCell(QStringLiteral("alice"));
        QVERIFY(cell);
        callTemplate->retire();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QVERIFY(!callTemplate.isNull());
        QCOMPARE(cells(*callTemplate).value(u"busy").toInt(), 1);
        Ran ran;
        startCall(*callTemplate, cell, QStringLiteral("echo retired"), ran);
        QTRY_VERIFY_WITH_TIMEOUT(ran.result.has_value(), 20000);
        QCOMPARE(ran.output, QByteArray("retired\n"));
        QCOMPARE(ran.result->exitCode, std::optional<int>(0));
        QTRY_VERIFY_WITH_TIMEOUT(callTemplate.isNull(), 5000);
    }

    // Its program cannot run: the template's jail stands, but every cell it is asked for fails,
    // and calls start cold.
    void aTemplateWhoseCellsCannotStartHandsOutNoCell()
    {
        CallTemplate callTemplate(*m_supervisor, bashTemplate(QStringLiteral("/nonexistent/bash")),
                                  socketPath(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(cells(callTemplate).value(u"failed").toInt() >= 1, 20000);
        QVERIFY(callTemplate.status()
                        .value(u"last_cell_failure")
                        .toString()
                        .contains(u"/nonexistent/bash"));
        QCOMPARE(callTemplate.takeCell(QStringLiteral("alice")), nullptr);
        QCOMPARE(cells(callTemplate).value(u"made").toInt(), 0);
        QVERIFY(callTemplate.status().value(u"state").toString() != u"running");
    }
};

QTEST_GUILESS_MAIN(TestCallTemplate)
#include "tst_calltemplate.moc"
