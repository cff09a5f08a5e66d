#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace cmcp::audit {

// What `cmcpd --verify-audit` found.
struct Verdict
{
    bool intact = false;
    // Where the first broken record is (file, 1-based line) and why; empty when intact.
    QString file;
    qint64 line = 0;
    QString reason;
    // Of the records that verified: how many, the last one's seq and hash (compare them with a
    // copy kept elsewhere: removing whole records from the end of the newest file leaves a
    // shorter chain that verifies, as with any hash chain without an outside anchor).
    quint64 records = 0;
    quint64 lastSeq = 0;
    QByteArray lastHash;
    quint64 recordsReportedLost = 0; // the daemon's own `records_lost` records (write failures)

    QString report() const; // one or two lines for people
};

// Verifies one audit log file or a rotated sequence. The files are taken in the order of their
// first record, so `audit.jsonl*` in any order works; the chain must start at record 1 and run
// through every file without a gap.
Verdict verifyFiles(const QStringList &files);

} // namespace cmcp::audit
