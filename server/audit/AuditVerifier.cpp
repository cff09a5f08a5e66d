#include "audit/AuditVerifier.h"

#include "audit/AuditChain.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <limits>

namespace cmcp::audit {

namespace {

struct AuditFile
{
    QString path;
    QList<QByteArray> lines;
    bool endsInsideLine = false;
    quint64 firstSeq = std::numeric_limits<quint64>::max(); // of its first well-formed record
    QString readError;
};

AuditFile load(const QString &path)
{
    AuditFile file;
    file.path = path;
    QFile input(path);
    if (!input.open(QIODevice::ReadOnly)) {
        file.readError = QStringLiteral("cannot read: %1").arg(input.errorString());
        return file;
    }
    const QByteArray content = input.readAll();
    if (content.isEmpty())
        return file;
    file.endsInsideLine = !content.endsWith('\n');
    file.lines = content.split('\n');
    if (!file.endsInsideLine)
        file.lines.removeLast(); // the empty piece after the last newline
    for (const QByteArray &line : std::as_const(file.lines)) {
        const OpenedRecord record = open(line);
        if (record.problem.isEmpty()) {
            file.firstSeq = record.seq;
            break;
        }
    }
    return file;
}

bool isRecordsLost(const QByteArray &line)
{
    return line.contains("\"event\":\"records_lost\"");
}

quint64 lostCount(const QByteArray &line)
{
    return quint64(QJsonDocument::fromJson(line).object().value(QLatin1String("count")).toDouble());
}

// Why the record at `index` has seq `found` where `expected` was due.
QString sequenceProblem(const AuditFile &file, qsizetype index, quint64 expected, quint64 found)
{
    if (found < expected)
        return QStringLiteral("inserted or duplicated: a second record %1, after record %2")
                .arg(found)
                .arg(expected - 1);
    for (qsizetype later = index + 1; later < file.lines.size(); ++later) {
        const OpenedRecord record = open(file.lines.at(later));
        if (record.problem.isEmpty() && record.seq == expected)
            return QStringLiteral("reordered: record %1 is here, record %2 comes later (line %3)")
                    .arg(found)
                    .arg(expected)
                    .arg(later + 1);
    }
    return QStringLiteral("deleted: record %1 is missing (found record %2 where it was due)")
            .arg(expected)
            .arg(found);
}

} // namespace

QString Verdict::report() const
{
    QString text;
    if (intact)
        text = QStringLiteral("audit log intact: %1 records, seq 1..%2, last hash %3")
                       .arg(records)
                       .arg(lastSeq)
                       .arg(QString::fromLatin1(lastHash));
    else
        text = QStringLiteral("audit log BROKEN at %1 line %2: %3 (%4 records verified before it)")
                       .arg(file)
                       .arg(line)
                       .arg(reason)
                       .arg(records);
    if (recordsReportedLost > 0)
        text += QStringLiteral("\nnote: the daemon recorded %1 record(s) lost to write failures "
                               "(records_lost)")
                        .arg(recordsReportedLost);
    return text;
}

Verdict verifyFiles(const QStringList &paths)
{
    Verdict verdict;
    QList<AuditFile> files;
    for (const QString &path : paths)
        files.append(load(path));
    std::stable_sort(files.begin(), files.end(), [](const AuditFile &a, const AuditFile &b) {
        return a.firstSeq < b.firstSeq;
    });

    quint64 expectedSeq = 1;
    QByteArray expectedPrev = genesisHash();
    auto broken = [&verdict](const AuditFile &file, qsizetype index, const QString &reason) {
        verdict.file = file.path;
        verdict.line = index + 1;
        verdict.reason = reason;
        return verdict;
    };
    for (const AuditFile &file : std::as_const(files)) {
        if (!file.readError.isEmpty())
            return broken(file, -1, file.readError);
        if (file.lines.isEmpty())
            return broken(file, 0, QStringLiteral("the file is empty: truncated"));
        for (qsizetype i = 0; i < file.lines.size(); ++i) {
            const QByteArray &line = file.lines.at(i);
            const bool last = i == file.lines.size() - 1;
            if (last && file.endsInsideLine)
                return broken(file, i,
                              QStringLiteral("truncated: the last record has no end of line "
                                             "(a write cut short or the file cut)"));
            if (line.isEmpty())
                return broken(file, i, QStringLiteral("an empty line: edited"));
            const OpenedRecord record = open(line);
            if (!record.problem.isEmpty())
                return broken(file, i, record.problem);
            if (!record.hashMatches)
                return broken(file, i,
                              QStringLiteral("edited: the record no longer matches its hash"));
            if (record.seq != expectedSeq) {
                if (expectedSeq == 1 && verdict.records == 0)
                    return broken(file, i,
                                  QStringLiteral("deleted: the chain starts at record %1, not 1 "
                                                 "(records removed, or an earlier rotated file "
                                                 "not given)")
                                          .arg(record.seq));
                return broken(file, i, sequenceProblem(file, i, expectedSeq, record.seq));
            }
            if (record.prev != expectedPrev)
                return broken(
                        file, i,
                        QStringLiteral("the chain is broken: prev is not the hash of record %1 "
                                       "(a record was replaced, or edited and re-hashed)")
                                .arg(expectedSeq - 1));
            if (isRecordsLost(line))
                verdict.recordsReportedLost += lostCount(line);
            ++verdict.records;
            verdict.lastSeq = record.seq;
            verdict.lastHash = record.hash;
            ++expectedSeq;
            expectedPrev = record.hash;
        }
    }
    if (files.isEmpty()) {
        verdict.reason = QStringLiteral("no file given");
        return verdict;
    }
    verdict.intact = true;
    return verdict;
}

} // namespace cmcp::audit
