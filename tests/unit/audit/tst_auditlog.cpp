#include "audit/AuditChain.h"
#include "audit/AuditLog.h"
#include "audit/AuditRecord.h"
#include "audit/AuditVerifier.h"
#include "base/SecretRedaction.h"
#include "mcp/ToolResult.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <functional>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/vfs.h>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;

namespace {

QList<QByteArray> readLines(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<QByteArray> lines = file.readAll().split('\n');
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    return lines;
}

void writeLines(const QString &path, const QList<QByteArray> &lines)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    for (const QByteArray &line : lines)
        file.write(line + '\n');
}

QJsonObject objectOf(const QByteArray &line)
{
    return QJsonDocument::fromJson(line).object();
}

// A record of a call as the log writes it, read back.
QJsonObject written(const audit::RecordFields &fields)
{
    return objectOf(audit::seal(fields, 1, audit::genesisHash()).line);
}

QJsonObject note(int n)
{
    return QJsonObject{{u"event"_s, u"test"_s}, {u"n"_s, n}};
}

ToolCallRecord sampleCall()
{
    ToolCallRecord call;
    call.callId = 7;
    call.sessionId = u"s-1"_s;
    call.transport = u"stdio"_s;
    call.clientName = u"tester"_s;
    call.tool = u"system_run_command"_s;
    call.arguments = QJsonObject{{u"command"_s, u"curl -H 'Authorization: Bearer abc123' x"_s},
                                 {u"api_key"_s, u"k-999"_s},
                                 {u"nested"_s, QJsonArray{QJsonObject{{u"password"_s, 5}}}}};
    call.startedAt = QDateTime::currentDateTimeUtc();
    return call;
}

// Runs `body` while this process may write files only up to `bytes` long (RLIMIT_FSIZE; a write
// beyond fails with EFBIG instead of raising SIGXFSZ). False if the limit could not be set or
// restored.
bool whileFileSizeLimited(qint64 bytes, const std::function<void()> &body)
{
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit saved{};
    bool ok = ::getrlimit(RLIMIT_FSIZE, &saved) == 0;
    rlimit tight = saved;
    tight.rlim_cur = rlim_t(bytes);
    if (ok && ::setrlimit(RLIMIT_FSIZE, &tight) == 0) {
        body();
        ok = ::setrlimit(RLIMIT_FSIZE, &saved) == 0;
    } else {
        ok = false;
    }
    ::signal(SIGXFSZ, SIG_DFL);
    return ok;
}

} // namespace

class TestAuditLog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void sealedRecordsOpen();
    void writtenLogVerifies();
    void tamperingIsFound_data();
    void tamperingIsFound();
    void rotationKeepsTheChain();
    void missingRotatedFileIsFound();
    void restartResumesTheChain();
    void partialLastRecordIsReportedAndSkipped();
    void diskFullFailsLoudly();
    void callsShareSyncs_data();
    void callsShareSyncs();
    void failedSyncFailsClosed();
    void shortWriteLeavesNoHalfRecord();
    void finishedRecordsAreWrittenByTheEndOfThePass_data();
    void finishedRecordsAreWrittenByTheEndOfThePass();
    void lostFinishedRecordFailsItsCallClosed();
    void lostWithTheNextRecordFailsItsCallClosed();
    void callRecordsRotateInOrder();
    void stoppingWritesTheFinishedRecords();
    void secretsAreRedacted();
    void recordsSummarizeResults();
    void longArgumentsAreCondensed();

private:
    QString logPath() const { return m_dir->filePath(u"logs/audit.jsonl"_s); }
    AuditOptions options(qint64 maxBytes = 1 << 20, bool required = false) const
    {
        AuditOptions o;
        o.path = logPath();
        o.maxBytes = maxBytes;
        o.required = required;
        return o;
    }
    // A log of `count` test records after audit_opened, closed again.
    void writeLog(int count);
    // The rows of a test run on the temporary directory's file system and on tmpfs, where the
    // log syncs on the loop instead of its thread.
    static void fileSystemRows();
    // Moves the log to tmpfs for a tmpfs row; false (and the test is skipped) without one.
    bool useFileSystem(const QString &fileSystem);

    std::unique_ptr<QTemporaryDir> m_dir;
};

void TestAuditLog::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void TestAuditLog::fileSystemRows()
{
    QTest::addColumn<QString>("fileSystem");
    QTest::newRow("temporary directory") << u"temporary"_s;
    QTest::newRow("tmpfs") << u"tmpfs"_s;
}

bool TestAuditLog::useFileSystem(const QString &fileSystem)
{
    if (fileSystem != u"tmpfs"_s)
        return true;
    struct statfs info
    {
    };
    if (::statfs("/dev/shm", &info) != 0 || info.f_type != TMPFS_MAGIC)
        return false;
    m_dir = std::make_unique<QTemporaryDir>(u"/dev/shm/tst_auditlog-XXXXXX"_s);
    return m_dir->isValid();
}

void TestAuditLog::writeLog(int count)
{
    AuditLog log(options());
    QString error;
    QVERIFY2(log.open(&error), qPrintable(error));
    for (int i = 0; i < count; ++i)
        QVERIFY(log.append(note(i)));
}

void TestAuditLog::sealedRecordsOpen()
{
    const audit::SealedRecord first = audit::seal(note(1), 1, audit::genesisHash());
    const audit::OpenedRecord opened = audit::open(first.line);
    QVERIFY2(opened.problem.isEmpty(), qPrintable(opened.problem));
    QVERIFY(opened.hashMatches);
    QCOMPARE(opened.seq, 1u);
    QCOMPARE(opened.prev, audit::genesisHash());
    QCOMPARE(opened.hash, first.hash);
    QVERIFY(first.line.endsWith("\"hash\":\"" + first.hash + "\"}"));
    QCOMPARE(objectOf(first.line).value(u"n"_s).toInt(), 1);
}

void TestAuditLog::writtenLogVerifies()
{
    writeLog(5);
    const QList<QByteArray> lines = readLines(logPath());
    QCOMPARE(lines.size(), 6);
    QCOMPARE(objectOf(lines.first()).value(u"event"_s).toString(), u"audit_opened"_s);
    const audit::Verdict verdict = audit::verifyFiles({logPath()});
    QVERIFY2(verdict.intact, qPrintable(verdict.report()));
    QCOMPARE(verdict.records, 6u);
    QCOMPARE(verdict.lastSeq, 6u);
    QCOMPARE(verdict.lastHash, objectOf(lines.last()).value(u"hash"_s).toString().toLatin1());
    QFileInfo info(logPath());
    QCOMPARE(info.permissions() & (QFile::ReadOther | QFile::ReadGroup), QFile::Permissions());
}

void TestAuditLog::tamperingIsFound_data()
{
    QTest::addColumn<QString>("edit");
    QTest::addColumn<int>("brokenLine");
    QTest::addColumn<QString>("reason");
    QTest::newRow("a value edited") << u"edit"_s << 4 << u"edited"_s;
    QTest::newRow("edited and re-hashed") << u"rehash"_s << 5 << u"chain is broken"_s;
    QTest::newRow("a middle record deleted") << u"delete"_s << 4 << u"deleted"_s;
    QTest::newRow("the first record deleted") << u"deleteFirst"_s << 1 << u"deleted"_s;
    QTest::newRow("two records swapped") << u"swap"_s << 3 << u"reordered"_s;
    QTest::newRow("a record duplicated") << u"duplicate"_s << 5 << u"duplicated"_s;
    QTest::newRow("cut inside the last record") << u"truncate"_s << 6 << u"truncated"_s;
    QTest::newRow("a line of garbage") << u"garbage"_s << 3 << u"not a JSON object"_s;
    QTest::newRow("an empty line") << u"empty"_s << 2 << u"empty line"_s;
    QTest::newRow("the hash field moved") << u"moveHash"_s << 2 << u"not the last field"_s;
    QTest::newRow("a forged record inserted") << u"insert"_s << 4 << u"inserted"_s;
}

void TestAuditLog::tamperingIsFound()
{
    QFETCH(QString, edit);
    QFETCH(int, brokenLine);
    QFETCH(QString, reason);
    writeLog(5); // 6 records
    QList<QByteArray> lines = readLines(logPath());
    QCOMPARE(lines.size(), 6);
    if (edit == u"edit") {
        lines[3].replace("\"n\":2", "\"n\":9");
    } else if (edit == u"rehash") {
        // A forger who knows the format recomputes the edited record's own hash: the next
        // record's prev no longer matches.
        const audit::OpenedRecord original = audit::open(lines[3]);
        QJsonObject fields = objectOf(lines[3]);
        fields.insert(u"n"_s, 9);
        fields.remove(u"seq"_s);
        fields.remove(u"prev"_s);
        fields.remove(u"hash"_s);
        lines[3] = audit::seal(fields, original.seq, original.prev).line;
    } else if (edit == u"delete") {
        lines.removeAt(3);
    } else if (edit == u"deleteFirst") {
        lines.removeFirst();
    } else if (edit == u"swap") {
        lines.swapItemsAt(2, 3);
    } else if (edit == u"duplicate") {
        lines.insert(4, lines[3]);
    } else if (edit == u"garbage") {
        lines[2] = "{\"seq\":3,";
    } else if (edit == u"empty") {
        lines.insert(1, QByteArray());
    } else if (edit == u"moveHash") {
        QJsonObject fields = objectOf(lines[1]);
        lines[1] =
                QJsonDocument(fields).toJson(QJsonDocument::Compact); // keys sorted: hash not last
    } else if (edit == u"insert") {
        const audit::OpenedRecord before = audit::open(lines[1]);
        lines.insert(2, audit::seal(note(42), before.seq + 1, before.hash).line);
    }
    if (edit == u"truncate") {
        QFile file(logPath());
        QVERIFY(file.resize(file.size() - 20));
    } else {
        writeLines(logPath(), lines);
    }
    const audit::Verdict verdict = audit::verifyFiles({logPath()});
    QVERIFY(!verdict.intact);
    QCOMPARE(verdict.file, logPath());
    QVERIFY2(verdict.line == brokenLine, qPrintable(verdict.report()));
    QVERIFY2(verdict.reason.contains(reason), qPrintable(verdict.report()));
    QVERIFY(verdict.report().contains(u"BROKEN"_s));
}

void TestAuditLog::rotationKeepsTheChain()
{
    {
        AuditLog log(options(2000));
        QString error;
        QVERIFY2(log.open(&error), qPrintable(error));
        for (int i = 0; i < 60; ++i)
            QVERIFY(log.append(note(i)));
        QCOMPARE(log.lastSeq(), 61u);
    }
    QDir logs(m_dir->filePath(u"logs"_s));
    QStringList files;
    for (const QString &name : logs.entryList({u"audit.jsonl*"_s}, QDir::Files))
        files.append(logs.filePath(name));
    QVERIFY2(files.size() >= 5, qPrintable(files.join(u' ')));
    for (const QString &file : std::as_const(files))
        QVERIFY(QFileInfo(file).size() <= 2000);
    // The first record of a rotated file carries the last hash of the file before it.
    const QList<QByteArray> second = readLines(logPath() + u".2"_s);
    const QList<QByteArray> first = readLines(logPath() + u".1"_s);
    QCOMPARE(audit::open(second.first()).prev, audit::open(first.last()).hash);
    // Any order on the command line (a shell sorts .10 before .2).
    std::reverse(files.begin(), files.end());
    const audit::Verdict verdict = audit::verifyFiles(files);
    QVERIFY2(verdict.intact, qPrintable(verdict.report()));
    QCOMPARE(verdict.records, 61u);
}

void TestAuditLog::missingRotatedFileIsFound()
{
    {
        AuditLog log(options(2000));
        QString error;
        QVERIFY2(log.open(&error), qPrintable(error));
        for (int i = 0; i < 30; ++i)
            QVERIFY(log.append(note(i)));
    }
    const QString one = logPath() + u".1"_s, two = logPath() + u".2"_s;
    QVERIFY(QFile::exists(two));
    audit::Verdict verdict = audit::verifyFiles({one, logPath()});
    QVERIFY(!verdict.intact);
    QVERIFY2(verdict.reason.startsWith(u"deleted"_s), qPrintable(verdict.report()));
    verdict = audit::verifyFiles({two, logPath()});
    QVERIFY(!verdict.intact);
    QCOMPARE(verdict.line, 1);
    QVERIFY2(verdict.reason.contains(u"not 1"_s), qPrintable(verdict.report()));
}

void TestAuditLog::restartResumesTheChain()
{
    writeLog(3);
    writeLog(3); // a second daemon run: audit_opened again, seq 5 onwards
    const QList<QByteArray> lines = readLines(logPath());
    QCOMPARE(lines.size(), 8);
    QCOMPARE(audit::open(lines[4]).seq, 5u);
    QCOMPARE(objectOf(lines[4]).value(u"event"_s).toString(), u"audit_opened"_s);
    const audit::Verdict verdict = audit::verifyFiles({logPath()});
    QVERIFY2(verdict.intact, qPrintable(verdict.report()));
    QCOMPARE(verdict.records, 8u);
}

void TestAuditLog::partialLastRecordIsReportedAndSkipped()
{
    writeLog(2);
    {
        QFile file(logPath());
        QVERIFY(file.open(QIODevice::Append));
        file.write("{\"event\":\"call_fin"); // a crash in the middle of a write
    }
    writeLog(1);
    const QList<QByteArray> lines = readLines(logPath());
    QCOMPARE(lines.size(), 6);
    QCOMPARE(audit::open(lines[4]).seq, 4u); // the chain goes on from the last whole record
    QCOMPARE(audit::open(lines[4]).prev, audit::open(lines[2]).hash);
    const audit::Verdict verdict = audit::verifyFiles({logPath()});
    QVERIFY(!verdict.intact);
    QCOMPARE(verdict.line, 4);
}

void TestAuditLog::diskFullFailsLoudly()
{
    if (!QFile::exists(u"/dev/full"_s))
        QSKIP("no /dev/full");
    for (const bool required : {false, true}) {
        AuditOptions o = options(1 << 20, required);
        o.path = u"/dev/full"_s;
        AuditLog log(o);
        QString error;
        QVERIFY(!log.open(&error));
        QVERIFY2(error.contains(u"No space left"_s), qPrintable(error));
        QVERIFY(!log.append(note(1)));
        QVERIFY(log.lastError().contains(u"/dev/full"_s));
        QCOMPARE(log.failClosedReason().isEmpty(), !required);
        if (required)
            QVERIFY(log.failClosedReason().contains(u"audit log cannot be written"_s));
    }
}

// Group commit: the records written in one pass of the loop share a sync, which starts once the
// loop has handled what was ready; a record written while a sync runs waits for the next one,
// which covers every record written meanwhile; nothing is released before a sync that covers it.
void TestAuditLog::callsShareSyncs_data()
{
    fileSystemRows();
}

void TestAuditLog::callsShareSyncs()
{
    QFETCH(QString, fileSystem);
    if (!useFileSystem(fileSystem))
        QSKIP("no tmpfs at /dev/shm");
    AuditLog log(options(1 << 20, true));
    QString error;
    QVERIFY2(log.open(&error), qPrintable(error));
    const quint64 syncsAtOpen = log.syncCount();

    QList<int> released;
    for (int n = 0; n <= 5; ++n) {
        QVERIFY(log.append(note(n), false));
        log.whenDurable([&released, n] { released.append(n); });
    }
    // The sync starts from the loop, runs on its thread, and its end comes through the loop.
    QVERIFY(released.isEmpty());
    QCOMPARE(log.syncCount(), syncsAtOpen);
    QTRY_COMPARE(released.size(), 6);
    QCOMPARE(released, (QList<int>{0, 1, 2, 3, 4, 5}));
    QCOMPARE(log.syncCount() - syncsAtOpen, 1u); // one for the six records

    // Record 6 is written and its sync started; record 7, written after that start, is not
    // covered by it and waits for a sync of its own.
    QVERIFY(log.append(note(6), false));
    log.whenDurable([&] { released.append(6); });
    QTRY_COMPARE(log.syncCount() - syncsAtOpen, 2u);
    QVERIFY(log.append(note(7), false));
    log.whenDurable([&] { released.append(7); });
    QTRY_COMPARE(released.size(), 8);
    QCOMPARE(released.mid(6), (QList<int>{6, 7}));
    QCOMPARE(log.syncCount() - syncsAtOpen, 3u);

    bool atOnce = false;
    log.whenDurable([&] { atOnce = true; }); // nothing written since: nothing to wait for
    QVERIFY(atOnce);
    QCOMPARE(log.syncCount() - syncsAtOpen, 3u);
    const audit::Verdict verdict = audit::verifyFiles({logPath()});
    QVERIFY2(verdict.intact, qPrintable(verdict.report()));
}

// A sync that fails (fdatasync on /dev/null: EINVAL) releases its waiters with the reason, so
// that with AUDIT_REQUIRED their calls fail closed instead of sending unrecorded results.
void TestAuditLog::failedSyncFailsClosed()
{
    AuditOptions o = options(1 << 20, true);
    o.path = u"/dev/null"_s;
    AuditLog log(o);
    QString error;
    QVERIFY(!log.open(&error)); // its first record is synced at once, and fails
    QVERIFY2(error.contains(u"flush"_s), qPrintable(error));
    QVERIFY(log.append(note(1), false)); // the write itself works
    QVERIFY(log.failClosedReason().isEmpty());
    QString reasonSeen;
    bool released = false;
    log.whenDurable([&] {
        released = true;
        reasonSeen = log.failClosedReason();
    });
    QTRY_VERIFY(released);
    QVERIFY2(reasonSeen.contains(u"cannot flush the audit log"_s), qPrintable(reasonSeen));
}

// A write that the file size limit cuts short (as a full disk does) is cut back out; once writes
// work again, a records_lost record tells how many were lost, and the chain verifies.
void TestAuditLog::shortWriteLeavesNoHalfRecord()
{
    AuditLog log(options(1 << 20, true));
    QString error;
    QVERIFY2(log.open(&error), qPrintable(error));
    QVERIFY(log.append(note(0)));
    const qint64 size = QFileInfo(logPath()).size();

    bool appended = true;
    bool appendedAgain = true;
    QString reason;
    // Room for 30 bytes of the next record.
    QVERIFY(whileFileSizeLimited(size + 30, [&] {
        appended = log.append(note(1));
        appendedAgain = log.append(note(2));
        reason = log.failClosedReason();
    }));

    QVERIFY(!appended);
    QVERIFY(!appendedAgain);
    QVERIFY2(reason.contains(u"File too large"_s), qPrintable(reason));
    QCOMPARE(QFileInfo(logPath()).size(), size);
    QVERIFY(log.append(note(3)));
    QVERIFY(log.failClosedReason().isEmpty());
    const QList<QByteArray> lines = readLines(logPath());
    QCOMPARE(objectOf(lines[2]).value(u"event"_s).toString(), u"records_lost"_s);
    QCOMPARE(objectOf(lines[2]).value(u"count"_s).toInt(), 2);
    QCOMPARE(objectOf(lines[3]).value(u"n"_s).toInt(), 3);
    const audit::Verdict verdict = audit::verifyFiles({logPath()});
    QVERIFY2(verdict.intact, qPrintable(verdict.report()));
    QCOMPARE(verdict.recordsReportedLost, 2u);
}

// A call's start record is in the file before its tool runs; its finished record goes with the
// next record written or at the end of the loop's pass, before the sync its result waits for.
void TestAuditLog::finishedRecordsAreWrittenByTheEndOfThePass_data()
{
    fileSystemRows();
}

void TestAuditLog::finishedRecordsAreWrittenByTheEndOfThePass()
{
    QFETCH(QString, fileSystem);
    if (!useFileSystem(fileSystem))
        QSKIP("no tmpfs at /dev/shm");
    AuditLog log(options());
    QString error;
    QVERIFY2(log.open(&error), qPrintable(error));
    ToolCallRecord first = sampleCall();
    log.recordCallStarted(first);
    QCOMPARE(readLines(logPath()).size(), 2); // audit_opened and call_started
    const ToolResult result = ToolResult::text(u"done"_s);
    log.recordCallFinished(first, &result);
    QCOMPARE(readLines(logPath()).size(), 2);
    QList<QByteArray> linesAtRelease;
    log.whenDurable([&] { linesAtRelease = readLines(logPath()); });

    // A start record written meanwhile carries the finished one along, in the chain's order.
    ToolCallRecord second = sampleCall();
    second.callId = 8;
    log.recordCallStarted(second);
    QList<QByteArray> lines = readLines(logPath());
    QCOMPARE(lines.size(), 4);
    QCOMPARE(objectOf(lines[2]).value(u"event"_s).toString(), u"call_finished"_s);
    QCOMPARE(objectOf(lines[2]).value(u"call"_s).toInt(), 7);
    QCOMPARE(objectOf(lines[3]).value(u"event"_s).toString(), u"call_started"_s);
    QCOMPARE(objectOf(lines[3]).value(u"call"_s).toInt(), 8);
    QTRY_COMPARE(linesAtRelease.size(), 4);

    // Alone, it is written at the end of the pass, before its sync releases the result.
    log.recordCallFinished(second, &result);
    QCOMPARE(readLines(logPath()).size(), 4);
    linesAtRelease.clear();
    log.whenDurable([&] { linesAtRelease = readLines(logPath()); });
    QTRY_COMPARE(linesAtRelease.size(), 5);
    QCOMPARE(objectOf(linesAtRelease[4]).value(u"call"_s).toInt(), 8);
    const audit::Verdict verdict = audit::verifyFiles({logPath()});
    QVERIFY2(verdict.intact, qPrintable(verdict.report()));
    QCOMPARE(verdict.records, 5u);
}

// A finished record that cannot be written at the end of the pass is lost like any other: the
// chain goes on from the record before it, a records_lost record counts it, and its call learns
// why when it is released (with AUDIT_REQUIRED, it fails instead of sending its result).
void TestAuditLog::lostFinishedRecordFailsItsCallClosed()
{
    for (const bool required : {false, true}) {
        init();
        AuditLog log(options(1 << 20, required));
        QString error;
        QVERIFY2(log.open(&error), qPrintable(error));
        const ToolCallRecord call = sampleCall();
        log.recordCallStarted(call);
        const qint64 size = QFileInfo(logPath()).size();
        const ToolResult result = ToolResult::text(u"done"_s);
        log.recordCallFinished(call, &result);
        QVERIFY(log.failClosedReason().isEmpty());
        bool released = false;
        QString reasonSeen;
        log.whenDurable([&] {
            released = true;
            reasonSeen = log.failClosedReason();
        });

        QVERIFY(whileFileSizeLimited(size + 30, [] { QTest::qWait(0); }));

        QTRY_VERIFY(released);
        if (required)
            QVERIFY2(reasonSeen.contains(u"File too large"_s), qPrintable(reasonSeen));
        else
            QVERIFY2(reasonSeen.isEmpty(), qPrintable(reasonSeen));
        QCOMPARE(QFileInfo(logPath()).size(), size);
        QCOMPARE(log.lastSeq(), 2u);
        QVERIFY(log.append(note(1)));
        const QList<QByteArray> lines = readLines(logPath());
        QCOMPARE(lines.size(), 4);
        QCOMPARE(objectOf(lines[2]).value(u"event"_s).toString(), u"records_lost"_s);
        QCOMPARE(objectOf(lines[2]).value(u"count"_s).toInt(), 1);
        const audit::Verdict verdict = audit::verifyFiles({logPath()});
        QVERIFY2(verdict.intact, qPrintable(verdict.report()));
        QCOMPARE(verdict.recordsReportedLost, 1u);
    }
}

// Lost with the start record of the next call, which carried it: the next call fails before its
// tool runs (with AUDIT_REQUIRED), and the first learns why when it is released, even after a
// later record was written again.
void TestAuditLog::lostWithTheNextRecordFailsItsCallClosed()
{
    for (const bool required : {false, true}) {
        init();
        AuditLog log(options(1 << 20, required));
        QString error;
        QVERIFY2(log.open(&error), qPrintable(error));
        ToolCallRecord first = sampleCall();
        log.recordCallStarted(first);
        const qint64 size = QFileInfo(logPath()).size();
        const ToolResult result = ToolResult::text(u"done"_s);
        log.recordCallFinished(first, &result);
        bool released = false;
        QString reasonSeen;
        log.whenDurable([&] {
            released = true;
            reasonSeen = log.failClosedReason();
        });

        ToolCallRecord second = sampleCall();
        second.callId = 8;
        QString secondRefused;
        QVERIFY(whileFileSizeLimited(size + 30, [&] {
            log.recordCallStarted(second);
            secondRefused = log.failClosedReason();
        }));

        QCOMPARE(secondRefused.isEmpty(), !required);
        QVERIFY(!released);
        QVERIFY(log.append(note(1), false)); // writing works again
        QVERIFY(log.failClosedReason().isEmpty());
        QTRY_VERIFY(released);
        if (required)
            QVERIFY2(reasonSeen.contains(u"File too large"_s), qPrintable(reasonSeen));
        else
            QVERIFY2(reasonSeen.isEmpty(), qPrintable(reasonSeen));
        QVERIFY(log.failClosedReason().isEmpty());
        const QList<QByteArray> lines = readLines(logPath());
        QCOMPARE(lines.size(), 4);
        QCOMPARE(objectOf(lines[2]).value(u"event"_s).toString(), u"records_lost"_s);
        QCOMPARE(objectOf(lines[2]).value(u"count"_s).toInt(), 2);
        const audit::Verdict verdict = audit::verifyFiles({logPath()});
        QVERIFY2(verdict.intact, qPrintable(verdict.report()));
        QCOMPARE(verdict.recordsReportedLost, 2u);
    }
}

// Deferred finished records never cross a rotation out of order: every call's records are in
// the rotated files, in the chain's order.
void TestAuditLog::callRecordsRotateInOrder()
{
    {
        AuditLog log(options(3000));
        QString error;
        QVERIFY2(log.open(&error), qPrintable(error));
        const ToolResult result = ToolResult::text(u"done"_s);
        for (int i = 0; i < 40; ++i) {
            ToolCallRecord call = sampleCall();
            call.callId = quint64(i);
            log.recordCallStarted(call);
            log.recordCallFinished(call, &result);
            if (i % 3 == 0)
                QTest::qWait(0);
        }
        bool released = false;
        log.whenDurable([&] { released = true; });
        QTRY_VERIFY(released);
    }
    QDir logs(m_dir->filePath(u"logs"_s));
    QStringList files;
    for (const QString &name : logs.entryList({u"audit.jsonl*"_s}, QDir::Files))
        files.append(logs.filePath(name));
    QVERIFY2(files.size() >= 5, qPrintable(files.join(u' ')));
    for (const QString &file : std::as_const(files))
        QVERIFY(QFileInfo(file).size() <= 3000);
    const audit::Verdict verdict = audit::verifyFiles(files);
    QVERIFY2(verdict.intact, qPrintable(verdict.report()));
    QCOMPARE(verdict.records, 81u);
}

// A log that stops writes the finished records it holds: nothing is lost by a clean stop, and
// the next start resumes the chain after them.
void TestAuditLog::stoppingWritesTheFinishedRecords()
{
    {
        AuditLog log(options());
        QString error;
        QVERIFY2(log.open(&error), qPrintable(error));
        const ToolCallRecord call = sampleCall();
        log.recordCallStarted(call);
        const ToolResult result = ToolResult::text(u"done"_s);
        log.recordCallFinished(call, &result);
    }
    QList<QByteArray> lines = readLines(logPath());
    QCOMPARE(lines.size(), 3);
    QCOMPARE(objectOf(lines[2]).value(u"event"_s).toString(), u"call_finished"_s);
    {
        AuditLog log(options());
        QString error;
        QVERIFY2(log.open(&error), qPrintable(error));
        QCOMPARE(log.lastSeq(), 4u);
    }
    const audit::Verdict verdict = audit::verifyFiles({logPath()});
    QVERIFY2(verdict.intact, qPrintable(verdict.report()));
    QCOMPARE(verdict.records, 4u);
}

void TestAuditLog::secretsAreRedacted()
{
    QVERIFY(audit::looksLikeSecretKey(u"X-Auth-Token"));
    QVERIFY(audit::looksLikeSecretKey(u"DB_PASSWORD"));
    QVERIFY(audit::looksLikeSecretKey(u"authorization"));
    QVERIFY(!audit::looksLikeSecretKey(u"path"));
    QVERIFY(!audit::looksLikeSecretKey(u"command"));
    const QJsonObject redacted = audit::redactSecrets(sampleCall().arguments);
    QCOMPARE(redacted.value(u"api_key"_s).toString(), u"[redacted]"_s);
    QCOMPARE(redacted.value(u"nested"_s)
                     .toArray()
                     .first()
                     .toObject()
                     .value(u"password"_s)
                     .toString(),
             u"[redacted]"_s);
    const QString command = redacted.value(u"command"_s).toString();
    QVERIFY2(!command.contains(u"abc123"_s), qPrintable(command));
    QVERIFY2(command.contains(u"Bearer [redacted]"_s), qPrintable(command));
    const QJsonObject inline_ = audit::redactSecrets(
            {{u"command"_s,
              u"PASSWORD=hunter2 tool --api-key 'k 1' --token=t0k \"secret\": \"s3\" ls"_s}});
    const QString text = inline_.value(u"command"_s).toString();
    for (const char *secret : {"hunter2", "k 1", "t0k", "s3"})
        QVERIFY2(!text.contains(QLatin1String(secret)), qPrintable(text));
    QVERIFY2(text.endsWith(u" ls"_s), qPrintable(text));
}

void TestAuditLog::recordsSummarizeResults()
{
    ToolCallRecord call = sampleCall();
    const QDateTime before = QDateTime::currentDateTimeUtc();
    const QJsonObject started = written(audit::callStartedRecord(call));
    QCOMPARE(started.value(u"event"_s).toString(), u"call_started"_s);
    QCOMPARE(started.value(u"call"_s).toInt(), 7);
    // The time in the form Qt writes a UTC time with milliseconds, and the time of the record.
    const QString time = started.value(u"time"_s).toString();
    const QDateTime at = QDateTime::fromString(time, Qt::ISODateWithMs);
    QCOMPARE(time, at.toString(Qt::ISODateWithMs));
    QVERIFY(time.endsWith(u'Z'));
    QVERIFY(at >= before.addMSecs(-1) && at <= QDateTime::currentDateTimeUtc());
    QCOMPARE(started.value(u"arguments"_s).toObject().value(u"api_key"_s).toString(),
             u"[redacted]"_s);
    QVERIFY(!QJsonDocument(started).toJson().contains("k-999"));

    call.outcome = ToolCallOutcome::Failed;
    call.durationMs = 12;
    const ToolResult refusal = ToolResult::error(u"'rm' is not in BASH_ALLOWED_COMMANDS"_s);
    QJsonObject finished = written(audit::callFinishedRecord(call, &refusal));
    QCOMPARE(finished.value(u"outcome"_s).toString(), u"failed"_s);
    QCOMPARE(finished.value(u"durationMs"_s).toInt(), 12);
    QVERIFY(!finished.contains(u"arguments"_s));
    QJsonObject summary = finished.value(u"result"_s).toObject();
    QCOMPARE(summary.value(u"isError"_s).toBool(), true);
    QCOMPARE(summary.value(u"error"_s).toString(), u"'rm' is not in BASH_ALLOWED_COMMANDS"_s);

    // Structured results: the job's accounting, never the output.
    const ToolResult job = ToolResult::structured({{u"success"_s, false},
                                                   {u"exit_code"_s, 3},
                                                   {u"wall_ms"_s, 40},
                                                   {u"stdout"_s, u"TOPSECRET"_s}},
                                                  true);
    finished = written(audit::callFinishedRecord(call, &job));
    summary = finished.value(u"result"_s).toObject();
    QCOMPARE(summary.value(u"accounting"_s).toObject().value(u"exit_code"_s).toInt(), 3);
    QCOMPARE(summary.value(u"accounting"_s).toObject().value(u"wall_ms"_s).toInt(), 40);
    QVERIFY(summary.value(u"bytes"_s).toInt() > 20);
    QCOMPARE(summary.value(u"contentBlocks"_s).toInt(), job.contentBlocks().size());
    QVERIFY(!QJsonDocument(finished).toJson().contains("TOPSECRET"));

    call.outcome = ToolCallOutcome::InvalidArguments;
    call.detail = u"arguments.command: missing"_s;
    finished = written(audit::callFinishedRecord(call, nullptr));
    QCOMPARE(finished.value(u"outcome"_s).toString(), u"invalid_arguments"_s);
    QCOMPARE(finished.value(u"detail"_s).toString(), call.detail);
    QVERIFY(!finished.contains(u"result"_s));
}

void TestAuditLog::longArgumentsAreCondensed()
{
    ToolCallRecord call = sampleCall();
    const QString content(100000, u'x');
    call.arguments = QJsonObject{{u"path"_s, u"a.txt"_s}, {u"content"_s, content}};
    const QJsonObject arguments =
            written(audit::callStartedRecord(call)).value(u"arguments"_s).toObject();
    QCOMPARE(arguments.value(u"path"_s).toString(), u"a.txt"_s);
    const QString kept = arguments.value(u"content"_s).toString();
    QVERIFY(kept.size() < 1200);
    QVERIFY(kept.contains(u"100000 bytes"_s));
    QVERIFY(kept.contains(QString::fromLatin1(audit::sha256Hex(content.toUtf8()))));
}

QTEST_GUILESS_MAIN(TestAuditLog)
#include "tst_auditlog.moc"
