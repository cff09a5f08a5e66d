// JailReport: the JSON lines cmcp-jail writes on --report-fd (jail/protocol/Report.h), in any
// split, and what is not a record; and that what the jail's writer writes, the daemon reads back
// as the same record.

#include "sandbox/JailReport.h"

#include <QTest>

using namespace cmcp;
using Strings = std::vector<std::string>;

// The records speak std::string: let failed comparisons show the values.
namespace QTest {
template<>
inline char *toString(const std::string &text)
{
    return toString(QByteArray::fromStdString(text));
}
} // namespace QTest

namespace {

const QByteArray kStarted =
        R"({"cgroups":["/sys/fs/cgroup/cmcp/job-25864"],"event":"started","layers":["identity","rlimits","seccomp"],"pid":25865})"
        "\n";
const QByteArray kExit =
        R"({"cpu_ms":3,"event":"exit","exit_code":0,"killed":false,"oom_killed":false,"peak_memory_kb":2892,"signal":null,"wall_ms":8})"
        "\n";
const QByteArray kRefused =
        R"({"code":91,"event":"refused","layer":"policy","message":"cmcp-jail: policy: uid: 5 is outside [1000, 4294967293]"})"
        "\n";

} // namespace

class TestJailReport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void startedAndExitInAnySplit()
    {
        const QByteArray bytes = kStarted + kExit;
        for (qsizetype step = 1; step <= bytes.size(); ++step) {
            JailReport report;
            for (qsizetype at = 0; at < bytes.size(); at += step)
                report.addBytes(bytes.mid(at, step));
            report.finish();
            QVERIFY2(report.errors().isEmpty(), qPrintable(report.errors().join(u'\n')));
            QVERIFY(report.started());
            QCOMPARE(report.started()->pid, 25865);
            QVERIFY(report.started()->layers == Strings({"identity", "rlimits", "seccomp"}));
            QVERIFY(report.started()->cgroups == Strings({"/sys/fs/cgroup/cmcp/job-25864"}));
            QVERIFY(report.exit());
            QCOMPARE(report.exit()->exitCode, 0);
            QCOMPARE(report.exit()->signal, std::nullopt);
            QCOMPARE(report.exit()->wallMs, 8);
            QCOMPARE(report.exit()->cpuMs, 3);
            QCOMPARE(report.exit()->peakMemoryKb, 2892);
            QVERIFY(!report.exit()->oomKilled);
            QVERIFY(!report.exit()->killed);
            QVERIFY(!report.refusal());
        }
    }

    void refusal()
    {
        JailReport report;
        report.addBytes(kRefused);
        report.finish();
        QVERIFY(report.errors().isEmpty());
        QVERIFY(report.refusal());
        QCOMPARE(report.refusal()->layer, "policy");
        QCOMPARE(report.refusal()->code, 91);
        QCOMPARE(report.refusal()->message,
                 "cmcp-jail: policy: uid: 5 is outside [1000, 4294967293]");
        QVERIFY(!report.started());
        QVERIFY(!report.exit());
    }

    void killedBySignalWithoutPeakMemory()
    {
        JailReport report;
        report.addBytes(R"({"event":"exit","exit_code":null,"signal":9,"wall_ms":1002,"cpu_ms":0,)"
                        R"("peak_memory_kb":null,"oom_killed":true,"killed":true})");
        report.finish(); // the last line may lack its newline
        QVERIFY(report.errors().isEmpty());
        QVERIFY(report.exit());
        QCOMPARE(report.exit()->exitCode, std::nullopt);
        QCOMPARE(report.exit()->signal, 9);
        QCOMPARE(report.exit()->peakMemoryKb, std::nullopt);
        QVERIFY(report.exit()->oomKilled);
        QVERIFY(report.exit()->killed);
    }

    void seccompDenialsAreCountedOnlyWhenReported()
    {
        const QByteArray head = R"({"event":"exit","exit_code":0,"signal":null,"wall_ms":1,)"
                                R"("cpu_ms":1,"peak_memory_kb":null,"oom_killed":false,)"
                                R"("killed":false)";
        JailReport counted;
        counted.addBytes(head
                         + R"(,"seccomp_denied":[{"syscall":"ptrace","errno":"EPERM","count":3}],)"
                           R"("seccomp_denied_unnamed":2})"
                           "\n");
        QVERIFY(counted.errors().isEmpty());
        QVERIFY(counted.exit() && counted.exit()->seccompDenied);
        QCOMPARE(counted.exit()->seccompDenied->size(), 1);
        QCOMPARE(counted.exit()->seccompDenied->at(0).syscall, "ptrace");
        QCOMPARE(counted.exit()->seccompDenied->at(0).errnoName, "EPERM");
        QCOMPARE(counted.exit()->seccompDenied->at(0).count, 3);
        QCOMPARE(counted.exit()->seccompDeniedUnnamed, 2);

        JailReport none;
        none.addBytes(head
                      + R"(,"seccomp_denied":[]})"
                        "\n");
        QVERIFY(none.exit() && none.exit()->seccompDenied && none.exit()->seccompDenied->empty());

        JailReport uncounted; // a template's call, or a kernel without user notifications
        uncounted.addBytes(head + "}\n");
        QVERIFY(uncounted.exit() && !uncounted.exit()->seccompDenied);
    }

    void malformedLinesAreErrorsNotRecords_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::newRow("plain text") << QByteArray("cmcp-jail: policy: bad\n");
        QTest::newRow("array") << QByteArray("[1,2]\n");
        QTest::newRow("unknown event") << QByteArray(R"({"event":"paused"})"
                                                     "\n");
        QTest::newRow("started without pid") << QByteArray(R"({"event":"started","layers":[]})"
                                                           "\n");
        QTest::newRow("started with a numeric layer")
                << QByteArray(R"({"event":"started","pid":3,"layers":[1]})"
                              "\n");
        QTest::newRow("started with a numeric cgroup")
                << QByteArray(R"({"event":"started","pid":3,"layers":[],"cgroups":[7]})"
                              "\n");
        QTest::newRow("exit without killed")
                << QByteArray(R"({"event":"exit","exit_code":0,"signal":null,"wall_ms":1,)"
                              R"("cpu_ms":1,"peak_memory_kb":null,"oom_killed":false})"
                              "\n");
        QTest::newRow("fractional exit code") << QByteArray(
                R"({"event":"exit","exit_code":0.5,"signal":null,"wall_ms":1,)"
                R"("cpu_ms":1,"peak_memory_kb":null,"oom_killed":false,"killed":false})"
                "\n");
        const QByteArray exitHead = R"({"event":"exit","exit_code":0,"signal":null,"wall_ms":1,)"
                                    R"("cpu_ms":1,"peak_memory_kb":null,"oom_killed":false,)"
                                    R"("killed":false,"seccomp_denied":)";
        QTest::newRow("seccomp_denied not a list") << exitHead + "{}}\n";
        QTest::newRow("seccomp denial without count") << exitHead
                        + R"([{"syscall":"x","errno":"EPERM"}]})"
                          "\n";
        QTest::newRow("seccomp denial counted 0") << exitHead
                        + R"([{"syscall":"x","errno":"EPERM","count":0}]})"
                          "\n";
        QTest::newRow("seccomp_denied_unnamed negative") << exitHead
                        + R"([],"seccomp_denied_unnamed":-1})"
                          "\n";
        QTest::newRow("refused without code")
                << QByteArray(R"({"event":"refused","layer":"x","message":"m"})"
                              "\n");
    }

    void malformedLinesAreErrorsNotRecords()
    {
        QFETCH(QByteArray, line);
        JailReport report;
        report.addBytes(line);
        report.finish();
        QCOMPARE(report.errors().size(), 1);
        QVERIFY(!report.started());
        QVERIFY(!report.exit());
        QVERIFY(!report.refusal());
    }

    void aSecondRecordOfTheSameKindIsAnError()
    {
        JailReport report;
        report.addBytes(kExit + kExit);
        report.finish();
        QVERIFY(report.exit());
        QCOMPARE(report.errors().size(), 1);
    }

    void overlongLineIsDroppedAndTheNextOneStillParsed()
    {
        JailReport report;
        const QByteArray junk(100 * 1024, 'j');
        for (int i = 0; i < 10; ++i)
            report.addBytes(junk.mid(i * 10240, 10240));
        report.addBytes("\n" + kExit);
        report.finish();
        QCOMPARE(report.errors().size(), 1);
        QVERIFY2(report.errors().first().contains(QStringLiteral("longer than")),
                 qPrintable(report.errors().first()));
        QVERIFY(report.exit());
    }

    // The jail's writer and the daemon's reader are one pair: every record, with every field set
    // (and with the optional ones left out), comes back as it was written.
    void whatTheJailWritesIsReadBackUnchanged()
    {
        const jail::Started started{25865, {"identity", "namespaces"}, {"/sys/fs/cgroup/cmcp/j"}};
        const jail::Refusal refusal{"landlock", 94, "cmcp-jail: landlock: not supported"};
        jail::Exit full;
        full.signal = 9;
        full.wallMs = 1002;
        full.cpuMs = 7;
        full.peakMemoryKb = 4096;
        full.oomKilled = true;
        full.pidsRefused = 3;
        full.killed = true;
        full.seccompDenied = std::vector<jail::SeccompDenial>{{"ptrace", "EPERM", 2},
                                                              {"socket", "EAFNOSUPPORT", 1}};
        full.seccompDeniedUnnamed = 5;
        jail::Exit bare;
        bare.exitCode = 0;

        for (const jail::ReportRecord &record :
             {jail::ReportRecord(started), jail::ReportRecord(refusal), jail::ReportRecord(full),
              jail::ReportRecord(bare)}) {
            JailReport report;
            report.addBytes(QByteArray::fromStdString(jail::reportLine(record)));
            QVERIFY2(report.errors().isEmpty(), qPrintable(report.errors().join(u'\n')));
            if (const auto *written = std::get_if<jail::Started>(&record))
                QVERIFY(report.started() && *report.started() == *written);
            else if (const auto *written = std::get_if<jail::Refusal>(&record))
                QVERIFY(report.refusal() && *report.refusal() == *written);
            else
                QVERIFY(report.exit() && *report.exit() == std::get<jail::Exit>(record));
        }
    }

    void emptyReportHasNothing()
    {
        JailReport report;
        report.finish();
        QVERIFY(!report.started() && !report.exit() && !report.refusal());
        QVERIFY(report.errors().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestJailReport)
#include "tst_jailreport.moc"
