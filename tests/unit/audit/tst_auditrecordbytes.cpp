// The audit log writes a call's records straight to JSON (callStartedRecord, callFinishedRecord);
// their definition is the QJsonObject of reference::callStartedFields / callFinishedFields
// (AuditRecordReference.h) sealed by seal(QJsonObject). A record's hash covers its bytes, so the
// two must agree byte for byte: these tests seal both for many calls and results and compare the
// lines.
#include "AuditRecordReference.h"

#include "audit/AuditChain.h"
#include "audit/AuditRecord.h"
#include "mcp/ToolResult.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QtTest>

#include <limits>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;

namespace {

// Strings that exercise escaping, UTF-16 order, the redactor and the bounds.
QStringList sampleStrings()
{
    QStringList strings{
            u""_s,
            u"plain"_s,
            u"ls -la | grep notes && cat data/notes.md"_s,
            u"quote \" backslash \\ slash / tab \t newline \n cr \r bs \b ff \f"_s,
            QString::fromUtf8("nul \0 bell \x07 esc \x1b us \x1f del \x7f", 30),
            u"é ü ß € 😀 ｆｕｌｌ 中文 \u2028 \u2029 \uFEFF"_s,
            QString(QChar(0xD800)) + u" lone high"_s,
            u"lone low "_s + QChar(0xDC00),
            u"curl -H 'Authorization: Bearer abc123def456' https://x"_s,
            u"Authorization: abcdef"_s,
            u"X-Api-Auth-Key: s3cr3t"_s,
            u"Token abcdefgh12345678 and a token word"_s,
            u"Basic dXNlcjpwYXNz"_s,
            u"PASSWORD=hunter2 db_token: abc AWS_ACCESS_KEY=AKIA123 --api-key xyz --password=pw"_s,
            u"git clone https://user:pa55@github.com/x/y"_s,
            u"curl -u admin:secret http://h --user bob:pw"_s,
            u"mysql -uroot -phunter2 db; sshpass -p 'pw' ssh h; redis-cli -a pass"_s,
            u"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----"_s,
            u"-----BEGIN RSA PRIVATE KEY-----\nMIIE cut short"_s,
            QString(1023, u'a') + u"password=x"_s,
            QString(1024, u'b'),
            QString(1025, u'c'),
            QString(1020, u'd') + u"secret=abcdefghij"_s,
            QString(5000, u'é'),
            QString(3000, u'x') + u"\n\"\\"_s,
            u"[omitted]"_s,
            u"[redacted]"_s,
            // Around the length up to which ASCII is written without a UTF-8 copy.
            QString(255, u'a') + u"\""_s,
            QString(256, u'a'),
            QString(255, u'a') + u"é"_s,
            QString(256, u'a') + u"\n"_s,
            u"del \x7f and tab \t in ASCII"_s,
    };
    return strings;
}

QStringList sampleKeys()
{
    return {u"command"_s,
            u"path"_s,
            u"content"_s,
            u"old_text"_s,
            u"new_text"_s,
            u"timeout"_s,
            u"env"_s,
            u"api_key"_s,
            u"X-Auth-Token"_s,
            u"db_password"_s,
            u"passphrase"_s,
            u"cookie"_s,
            u"sessionKey"_s,
            u"Zeta"_s,
            u"_under"_s,
            u"[omitted]"_s,
            u"[a]"_s,
            u"é"_s,
            u"😀"_s,
            u"ｆ"_s,
            u"€"_s,
            u"a\"b"_s,
            u"tab\tkey"_s,
            u""_s,
            QString(200, u'k'),
            QString(128, u'k') + u"x"_s,
            QString(128, u'k') + u"y"_s,
            QString(127, u'k'),
            QString(130, u'p') + u"token"_s,
            u"keyword"_s,
            u"bypass"_s};
}

QJsonValue sampleNumber(QRandomGenerator &random)
{
    switch (random.bounded(12)) {
    case 0:
        return 0;
    case 1:
        return -1;
    case 2:
        return 42;
    case 3:
        return qint64(9007199254740993LL);
    case 4:
        return std::numeric_limits<qint64>::min();
    case 5:
        return 1e300;
    case 6:
        return -0.0;
    case 7:
        return 3.14159;
    case 8:
        return 1e-7;
    case 9:
        return 123456789012345678.0;
    case 10:
        return double(random.generateDouble() * 1e6);
    default:
        return -2.5e-300;
    }
}

QJsonValue sampleValue(QRandomGenerator &random, int depth);

QJsonObject sampleObject(QRandomGenerator &random, int depth, int members)
{
    const QStringList keys = sampleKeys();
    QJsonObject object;
    for (int i = 0; i < members; ++i) {
        QString key = keys.at(random.bounded(int(keys.size())));
        if (random.bounded(3) == 0)
            key += QString::number(random.bounded(100));
        object.insert(key, sampleValue(random, depth + 1));
    }
    return object;
}

QJsonValue sampleValue(QRandomGenerator &random, int depth)
{
    const QStringList strings = sampleStrings();
    const int kind = random.bounded(depth > 10 ? 6 : 9);
    switch (kind) {
    case 0:
    case 1:
    case 2:
        return strings.at(random.bounded(int(strings.size())));
    case 3:
        return sampleNumber(random);
    case 4:
        return random.bounded(2) == 0;
    case 5:
        return QJsonValue(QJsonValue::Null);
    case 6:
    case 7:
        return sampleObject(random, depth, random.bounded(6));
    default: {
        QJsonArray array;
        const int items = random.bounded(7);
        for (int i = 0; i < items; ++i)
            array.append(sampleValue(random, depth + 1));
        return array;
    }
    }
}

ToolCallRecord baseCall(quint64 id)
{
    ToolCallRecord call;
    call.callId = id;
    call.sessionId = u"s-%1"_s.arg(id);
    call.transport = u"stdio"_s;
    call.clientName = u"tester"_s;
    call.tool = u"system_run_command"_s;
    call.durationMs = qint64(id % 100000) * 7; // ids reach 2^64 - 1: no overflow here
    return call;
}

QByteArray oldStarted(const ToolCallRecord &call, qint64 at, quint64 seq, const QByteArray &prev)
{
    return audit::seal(audit::reference::callStartedFields(call, at), seq, prev).line;
}

QByteArray newStarted(const ToolCallRecord &call, qint64 at, quint64 seq, const QByteArray &prev)
{
    return audit::seal(audit::callStartedRecord(call, at), seq, prev).line;
}

} // namespace

Q_DECLARE_METATYPE(std::optional<cmcp::ToolResult>)

class TestAuditRecordBytes : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void startedRecordsMatch_data();
    void startedRecordsMatch();
    void randomArgumentsMatch();
    void reusedBuffersMatch();
    void finishedRecordsMatch_data();
    void finishedRecordsMatch();
    void callFieldsMatch();
    void timesMatch();
    void numbersMatch();
    void sealedRecordsOpen();
};

void TestAuditRecordBytes::startedRecordsMatch_data()
{
    QTest::addColumn<QJsonObject>("arguments");
    QTest::newRow("empty") << QJsonObject{};
    QTest::newRow("typical") << QJsonObject{{u"command"_s, u"ls -la"_s}, {u"timeout"_s, 30}};
    QJsonObject strings;
    int n = 0;
    for (const QString &text : sampleStrings())
        strings.insert(u"s%1"_s.arg(n++, 2, 10, QLatin1Char('0')), text);
    QTest::newRow("every sample string") << strings;
    QJsonObject keys;
    for (const QString &key : sampleKeys())
        keys.insert(key, u"value of "_s + key);
    QTest::newRow("every sample key") << keys;
    QJsonObject secrets;
    for (const QString &key : sampleKeys())
        secrets.insert(key, QJsonObject{{u"n"_s, 1}, {u"list"_s, QJsonArray{1, u"x"_s}}});
    QTest::newRow("secret keys holding objects") << secrets;
    QJsonObject files{{u"path"_s, u"a.env"_s},
                      {u"content"_s, u"API_KEY=abc\n"_s},
                      {u"old_text"_s, QJsonArray{1, 2}},
                      {u"new_text"_s, QJsonObject{{u"a"_s, 1}}}};
    QTest::newRow("file contents") << files;
    QJsonObject many;
    for (int i = 0; i < 200; ++i)
        many.insert(u"key%1"_s.arg(i), i);
    QTest::newRow("too many keys") << many;
    many.insert(u"[omitted]"_s, u"the client's own"_s);
    many.insert(u"[0]"_s, 1);
    QTest::newRow("too many keys, one named [omitted]") << many;
    QJsonObject omittedFirst;
    for (int i = 0; i < 70; ++i)
        omittedFirst.insert(u"A%1"_s.arg(i, 3, 10, QLatin1Char('0')), i);
    QTest::newRow("[omitted] sorts after the kept keys") << omittedFirst;
    QJsonObject omittedLast;
    for (int i = 0; i < 70; ++i)
        omittedLast.insert(u"z%1"_s.arg(i, 3, 10, QLatin1Char('0')), i);
    omittedLast.insert(u"[omitted]"_s, 1);
    QTest::newRow("[omitted] replaces the client's") << omittedLast;
    QJsonArray longArray;
    for (int i = 0; i < 100; ++i)
        longArray.append(u"item %1"_s.arg(i));
    QTest::newRow("long array") << QJsonObject{{u"items"_s, longArray}};
    QJsonObject budget;
    for (int i = 0; i < 40; ++i)
        budget.insert(u"k%1"_s.arg(i, 2, 10, QLatin1Char('0')), QString(1000, u'v'));
    QTest::newRow("budget spent") << budget;
    QJsonArray budgetArray;
    for (int i = 0; i < 40; ++i)
        budgetArray.append(QString(900, u'w'));
    QTest::newRow("budget spent in an array") << QJsonObject{{u"a"_s, budgetArray}};
    QJsonValue deep = u"bottom"_s;
    for (int i = 0; i < 12; ++i)
        deep = (i % 2) ? QJsonValue(QJsonArray{deep, i}) : QJsonValue(QJsonObject{{u"d"_s, deep}});
    QTest::newRow("deep") << QJsonObject{{u"deep"_s, deep}};
    QJsonObject collide;
    collide.insert(QString(128, u'k') + u"1"_s, 1);
    collide.insert(QString(128, u'k') + u"2"_s, u"second"_s);
    collide.insert(QString(128, u'k') + u"3"_s, QJsonArray{3});
    collide.insert(QString(128, u'l'), 4);
    QTest::newRow("keys cut to the same name") << collide;
    QTest::newRow("parsed names beyond U+FFFF")
            << QJsonDocument::fromJson("{\"\xef\xbd\x86\":1,\"\xf0\x9f\x98\x80\":2,\"a\":3}")
                       .object();
    QTest::newRow("numbers")
            << QJsonDocument::fromJson(
                       "{\"i\":1,\"n\":-17,\"big\":9007199254740993,\"huge\":"
                       "123456789012345678901234567890,"
                       "\"f\":0.1,\"e\":1e-9,\"neg\":-0.0,\"exp\":1E+300,\"t\":true,\"nil\":null,"
                       "\"i64\":-9223372036854775808,\"frac\":2.50}")
                       .object();
}

void TestAuditRecordBytes::startedRecordsMatch()
{
    QFETCH(QJsonObject, arguments);
    ToolCallRecord call = baseCall(3);
    call.arguments = arguments;
    const QByteArray prev = audit::genesisHash();
    const QByteArray expected = oldStarted(call, 1764640800123, 5, prev);
    QCOMPARE(newStarted(call, 1764640800123, 5, prev), expected);
}

void TestAuditRecordBytes::randomArgumentsMatch()
{
    QRandomGenerator random(20261202);
    QByteArray prev = audit::genesisHash();
    for (int i = 0; i < 2000; ++i) {
        ToolCallRecord call = baseCall(quint64(i));
        call.arguments = sampleObject(random, 0, random.bounded(i % 50 == 0 ? 90 : 10));
        // Arguments as the server has them: parsed from the request's bytes.
        if (i % 2)
            call.arguments =
                    QJsonDocument::fromJson(QJsonDocument(call.arguments).toJson()).object();
        const audit::SealedRecord expected = audit::seal(
                audit::reference::callStartedFields(call, 1000 * i), quint64(i + 1), prev);
        const audit::SealedRecord written =
                audit::seal(audit::callStartedRecord(call, 1000 * i), quint64(i + 1), prev);
        if (written.line != expected.line) {
            qsizetype at = 0;
            while (at < written.line.size() && at < expected.line.size()
                   && written.line[at] == expected.line[at])
                ++at;
            qWarning("call %d: the records differ at byte %lld:\nwritten  ...%s\nexpected ...%s", i,
                     qlonglong(at),
                     written.line.mid(std::max<qsizetype>(0, at - 60), 160).constData(),
                     expected.line.mid(std::max<qsizetype>(0, at - 60), 160).constData());
            QCOMPARE(written.line, expected.line);
        }
        QCOMPARE(written.hash, expected.hash);
        prev = written.hash;
    }
}

// The log builds and seals every record in the same buffers: what a longer record left in them
// must not show in a shorter one.
void TestAuditRecordBytes::reusedBuffersMatch()
{
    QRandomGenerator random(20261204);
    audit::RecordFields fields;
    audit::SealedRecord sealed;
    QByteArray prev = audit::genesisHash();
    const ToolResult result = ToolResult::text(u"done"_s);
    for (int i = 0; i < 500; ++i) {
        ToolCallRecord call = baseCall(quint64(i));
        call.arguments = sampleObject(random, 0, random.bounded(i % 3 == 0 ? 40 : 3));
        const quint64 seq = quint64(i + 1);
        if (i % 2) {
            audit::callStartedRecord(fields, call, 1000 * i);
            audit::seal(fields, seq, prev, sealed);
            QCOMPARE(sealed.line, oldStarted(call, 1000 * i, seq, prev));
        } else {
            audit::callFinishedRecord(fields, call, i % 4 ? &result : nullptr, 1000 * i);
            audit::seal(fields, seq, prev, sealed);
            QCOMPARE(sealed.line,
                     audit::seal(audit::reference::callFinishedFields(
                                         call, i % 4 ? &result : nullptr, 1000 * i),
                                 seq, prev)
                             .line);
        }
        QCOMPARE(sealed.hash,
                 audit::sha256Hex(sealed.line.left(sealed.line.indexOf(",\"hash\":\""))));
        prev = sealed.hash;
    }
}

void TestAuditRecordBytes::finishedRecordsMatch_data()
{
    QTest::addColumn<std::optional<ToolResult>>("result");
    QTest::newRow("no result") << std::optional<ToolResult>();
    QTest::newRow("text") << std::optional(ToolResult::text(u"hello é 😀 \"x\"\n"_s));
    QTest::newRow("ASCII text") << std::optional(ToolResult::text(u"plain ASCII, 31 bytes"_s));
    QTest::newRow("unpaired surrogates")
            << std::optional(ToolResult::text(u"a"_s + QChar(0xD800) + u"b"_s + QChar(0xDC00)));
    QTest::newRow("error") << std::optional(ToolResult::error(u"refused: \"path\" \\ \x01"_s));
    QTest::newRow("long error") << std::optional(ToolResult::error(QString(3000, u'e')));
    QTest::newRow("empty error") << std::optional(ToolResult{QJsonArray{}, {}, {}, true});
    QTest::newRow("blocks") << std::optional(
            ToolResult{QJsonArray{QJsonObject{{u"type"_s, u"text"_s}, {u"text"_s, u"one"_s}},
                                  QJsonObject{{u"type"_s, u"image"_s}, {u"data"_s, u"AAAA"_s}},
                                  QJsonObject{{u"type"_s, u"text"_s}, {u"text"_s, u"zwei ü"_s}}},
                       {},
                       {},
                       false});
    QTest::newRow("structured failure")
            << std::optional(ToolResult::structuredFailure(u"no such file"_s));
    QTest::newRow("job") << std::optional(ToolResult::structured({{u"success"_s, true},
                                                                  {u"exit_code"_s, 0},
                                                                  {u"stdout"_s, QString(600, u'x')},
                                                                  {u"stderr"_s, QString()},
                                                                  {u"wall_ms"_s, 11},
                                                                  {u"cpu_ms"_s, 3},
                                                                  {u"timed_out"_s, false}}));
    QJsonObject everything{{u"success"_s, false},
                           {u"exit_code"_s, -9},
                           {u"signal"_s, u"SIGKILL"_s},
                           {u"timed_out"_s, true},
                           {u"cancelled"_s, false},
                           {u"oom_killed"_s, true},
                           {u"truncated"_s, QJsonValue::Null},
                           {u"wall_ms"_s, 1.5e3},
                           {u"cpu_ms"_s, 123456789012.0},
                           {u"peak_memory_kb"_s, 65536},
                           {u"insecure"_s, QJsonObject{{u"x"_s, 1}}},
                           {u"message"_s, QString(2500, u'm') + u"\t\""_s}};
    everything.insert(u"sandbox_refusals"_s,
                      QJsonArray{QJsonObject{{u"layer"_s, u"landlock"_s},
                                             {u"rule"_s, u"write"_s},
                                             {u"target"_s, u"/etc/passwd"_s},
                                             {u"count"_s, 2}},
                                 QJsonObject{{u"layer"_s, u"egress"_s},
                                             {u"target"_s, u"https://h/p?token=abc#frag"_s}},
                                 QJsonObject{{u"layer"_s, u"seccomp"_s},
                                             {u"syscall"_s, u"ptrace"_s},
                                             {u"count"_s, 1.5},
                                             {u"rule"_s, QString(2100, u'r')}},
                                 QJsonObject{}, u"not an object"_s,
                                 QJsonObject{{u"count"_s, u"3"_s}}});
    QTest::newRow("every accounting field") << std::optional(ToolResult::structured(everything));
    QTest::newRow("refusals only") << std::optional(
            ToolResult::structured({{u"sandbox_refusals"_s, QJsonArray{QJsonObject{}}}}));
    QTest::newRow("structured, no accounting")
            << std::optional(ToolResult::structured({{u"entries"_s, QJsonArray{1, 2}}}, true));
}

void TestAuditRecordBytes::finishedRecordsMatch()
{
    QFETCH(std::optional<ToolResult>, result);
    const ToolResult *given = result ? &*result : nullptr;
    for (const ToolCallOutcome outcome :
         {ToolCallOutcome::Succeeded, ToolCallOutcome::Failed, ToolCallOutcome::Cancelled}) {
        ToolCallRecord call = baseCall(11);
        call.outcome = outcome;
        call.arguments = QJsonObject{{u"not"_s, u"written"_s}};
        if (outcome == ToolCallOutcome::Cancelled)
            call.detail = u"the client cancelled: "_s + QString(2100, u'c');
        const QByteArray prev(audit::HashHexLength, 'a');
        const QByteArray expected =
                audit::seal(audit::reference::callFinishedFields(call, given, 1764640800999), 9,
                            prev)
                        .line;
        QCOMPARE(audit::seal(audit::callFinishedRecord(call, given, 1764640800999), 9, prev).line,
                 expected);
    }
}

void TestAuditRecordBytes::callFieldsMatch()
{
    const QStringList strings = sampleStrings();
    const qint64 times[] = {
            0, 1764640800123, -1, 253402300799999, 253402300800000, -62135596800001};
    for (qsizetype i = 0; i < strings.size(); ++i) {
        ToolCallRecord call = baseCall(quint64(i) * 1000003);
        call.sessionId = strings.at(i);
        call.clientName = strings.at((i + 1) % strings.size());
        call.transport = strings.at((i + 2) % strings.size());
        call.tool = strings.at((i + 3) % strings.size());
        call.taskId = strings.at((i + 4) % strings.size());
        call.detail = strings.at((i + 5) % strings.size());
        call.durationMs = i % 2 ? -qint64(i) : qint64(i) << 40;
        const qint64 at = times[i % std::size(times)];
        const quint64 seq = i % 3 ? quint64(i + 1) : (quint64(1) << 53) - quint64(i);
        const QByteArray prev = audit::genesisHash();
        QCOMPARE(newStarted(call, at, seq, prev), oldStarted(call, at, seq, prev));
        QCOMPARE(audit::seal(audit::callFinishedRecord(call, nullptr, at), seq, prev).line,
                 audit::seal(audit::reference::callFinishedFields(call, nullptr, at), seq, prev)
                         .line);
    }
}

// A record's time over the whole range of ms since the epoch a QDateTime formats and past it:
// the daemon formats the years 1 to 9999 itself.
void TestAuditRecordBytes::timesMatch()
{
    constexpr qint64 firstMs = -62135596800000; // 0001-01-01T00:00:00.000Z
    constexpr qint64 lastMs = 253402300799999; // 9999-12-31T23:59:59.999Z
    QList<qint64> times{firstMs,
                        firstMs - 1,
                        firstMs + 1,
                        firstMs - 86400000LL * 366,
                        lastMs,
                        lastMs + 1,
                        lastMs - 1,
                        -1,
                        0,
                        1,
                        999,
                        -999,
                        -1000,
                        -1001,
                        951782400000, // 2000-02-29
                        951868800000 - 1, // the last ms of 2000-02-29
                        -2203977600000, // 1900-03-01
                        4107542400000, // 2100-03-01
                        4107542400000 - 1,
                        1764640800123};
    QRandomGenerator random(20261203);
    for (int i = 0; i < 20000; ++i)
        times.append(firstMs - 1000000000
                     + qint64(random.bounded(1.0) * double(lastMs - firstMs + 2000000000)));
    for (int i = 0; i < 2000; ++i)
        times.append(qint64(random.generate64()));
    const QByteArray prev = audit::genesisHash();
    ToolCallRecord call = baseCall(1);
    for (const qint64 at : times) {
        const QByteArray expected = oldStarted(call, at, 1, prev);
        if (newStarted(call, at, 1, prev) != expected)
            QFAIL(qPrintable(u"the records of the time %1 ms differ:\n%2\n%3"_s.arg(at).arg(
                    QString::fromUtf8(newStarted(call, at, 1, prev)),
                    QString::fromUtf8(expected))));
    }
}

// Call ids, durations and seqs at the edges of what a double holds exactly, and beyond.
void TestAuditRecordBytes::numbersMatch()
{
    constexpr qint64 exact = qint64(1) << 53;
    const qint64 signedValues[] = {0,
                                   1,
                                   -1,
                                   exact - 1,
                                   exact,
                                   exact + 1,
                                   exact + 2,
                                   -exact,
                                   -exact - 1,
                                   -exact - 3,
                                   std::numeric_limits<qint64>::max(),
                                   std::numeric_limits<qint64>::min()};
    const quint64 unsignedValues[] = {0,
                                      1,
                                      quint64(exact) - 1,
                                      quint64(exact),
                                      quint64(exact) + 1,
                                      quint64(exact) + 3,
                                      quint64(std::numeric_limits<qint64>::max()) + 1,
                                      std::numeric_limits<quint64>::max()};
    const QByteArray prev = audit::genesisHash();
    const ToolResult result = ToolResult::text(u"x"_s);
    for (const quint64 id : unsignedValues) {
        for (const qint64 duration : signedValues) {
            ToolCallRecord call = baseCall(id);
            call.durationMs = duration;
            for (const quint64 seq : unsignedValues) {
                if (seq == 0)
                    continue;
                QCOMPARE(audit::seal(audit::callFinishedRecord(call, &result, 0), seq, prev).line,
                         audit::seal(audit::reference::callFinishedFields(call, &result, 0), seq,
                                     prev)
                                 .line);
            }
        }
    }
}

void TestAuditRecordBytes::sealedRecordsOpen()
{
    ToolCallRecord call = baseCall(1);
    call.arguments = QJsonObject{{u"command"_s, u"echo \"é\""_s}};
    const audit::SealedRecord sealed =
            audit::seal(audit::callStartedRecord(call), 1, audit::genesisHash());
    const audit::OpenedRecord opened = audit::open(sealed.line);
    QVERIFY2(opened.problem.isEmpty(), qPrintable(opened.problem));
    QVERIFY(opened.hashMatches);
    QCOMPARE(opened.seq, 1u);
    QCOMPARE(opened.hash, sealed.hash);
}

QTEST_GUILESS_MAIN(TestAuditRecordBytes)
#include "tst_auditrecordbytes.moc"
