#pragma once

#include "audit/AuditChain.h"
#include "audit/SyncThread.h"
#include "mcp/ToolCallRecord.h"
#include "posix/UniqueFd.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace cmcp {

class Settings;
struct ToolResult;

struct AuditOptions
{
    QString path; // empty: no audit log
    qint64 maxBytes = 64 << 20; // a file is rotated before it would grow past this
    bool required = false; // a record that cannot be written fails the call
    static AuditOptions fromSettings(const Settings &settings);
};

// The tamper-evident audit log: one hash-chained JSON record per line (format in AuditChain.h),
// appended with write(2) and made durable with fdatasync(2) before the call's result goes out.
//
// Group commit: a call's record is written on the event loop (a copy into the page cache, a
// few microseconds, which keeps the chain's order the order of the calls), and the fdatasync
// runs on a thread of its own (audit::SyncThread). A sync is asked for once the loop has handled
// the events ready when a call began waiting, so the calls that end in one pass of the loop
// share it; calls that end while a sync is running wait for the next one, which the thread
// starts as soon as the first returns and which covers them all. Concurrent calls share syncs and
// the loop never waits for the disk. On tmpfs, whose fdatasync has no disk to wait for, the loop
// runs the sync itself at the end of the pass.
//
// A call's start record is written before its tool runs. Its finished record, which its result
// waits for anyway, is written with the next record the log writes or at the end of the loop's
// pass, whichever comes first, and always before the sync its result waits for: the calls that
// end in one pass cost one write(2) between them instead of one each. Until then it is sealed and
// chained in memory only, so a crash of the daemon within that pass loses it, as it loses the
// call's result, which was never sent.
//
// When the file would grow past maxBytes it is renamed to `<path>.<N>` (N = 1, 2, ...; the
// highest is the most recent) and a new file continues the chain. A restarted daemon resumes the
// chain from the last record it finds.
//
// A record that cannot be written (disk full, I/O error) is cut back out of the file, so no
// half record stays, and reported at error level; once writing works again a `records_lost`
// record says how many were lost. With `required`, failClosedReason() tells the server to fail
// the call instead.
class AuditLog : public QObject
{
    Q_OBJECT
public:
    explicit AuditLog(AuditOptions options, QObject *parent = nullptr);
    ~AuditLog() override;

    // Creates the directory and file when needed, resumes the chain and writes `audit_opened`.
    bool open(QString *error);

    // Appends one record (seq, prev and hash are added). `durable`: fdatasync before returning.
    bool append(const QJsonObject &fields, bool durable = true);
    // The same for fields already serialised (the records of a call).
    bool append(const audit::RecordFields &fields, bool durable = true);

    // Runs `then` on this object's thread once every record appended so far is on disk, or its
    // sync failed (failClosedReason() and lastError() then say so); at once when nothing waits
    // for a sync. Never before: a result sent from `then` follows its record to the disk.
    void whenDurable(std::function<void()> then);

    // Why the last append, or else the last sync, failed; empty when both succeeded. While the
    // result of a call whose finished record could not be written is released, why that failed.
    QString lastError() const
    {
        if (!m_settlingFailure.isEmpty())
            return m_settlingFailure;
        return m_lastError.isEmpty() ? m_syncError : m_lastError;
    }
    // Non-empty when the call in progress must fail closed: the log is required and the last
    // record could not be written, or the last sync failed.
    QString failClosedReason() const;

    quint64 lastSeq() const { return m_seq; }
    // fdatasync calls made so far, at once or in groups: records per sync is what group commit
    // saves.
    quint64 syncCount() const { return m_inlineSyncs + m_syncThread->syncCount(); }

public Q_SLOTS:
    // Neither record has a sync of its own: the server sends the call's result from whenDurable,
    // after the sync that covers them; a crash before loses a call whose client never had its
    // result. The start record is written at once, the finished one by the end of the loop's pass
    // (see above). Called on the server's thread (McpServer emits there), like every other
    // member.
    void recordCallStarted(const cmcp::ToolCallRecord &call);
    void recordCallFinished(const cmcp::ToolCallRecord &call, const cmcp::ToolResult *result);

private:
    bool openFile(QString *error);
    bool resumeChain(QString *error);
    bool rotate(QString *error);
    // `bytes`: a record's line and its newline.
    bool writeLine(const QByteArray &bytes, bool durable, QString *error);
    // Seals the record of the next seq after the last hash into the given one.
    using Sealer = std::function<void(quint64 seq, const QByteArray &prev, audit::SealedRecord &)>;
    enum class Write { Now, Durable, Deferred };
    bool appendWith(const Sealer &seal, Write write);
    bool appendSealed(const Sealer &seal, Write write, QString *error);
    // Writes the deferred records; false (and they are lost) when that fails.
    bool writeDeferred();
    // The deferred records could not be written (`error`): the chain goes back to the last record
    // written, and the calls waiting for them are told.
    void loseDeferred(const QString &error);
    // At the end of the loop's pass: writes the deferred records, and asks the sync thread for a
    // sync of every record written so far, or on tmpfs runs it.
    void endOfPass();
    void onSynced(quint64 syncedSeq, int syncErrno);
    // Runs the waiters whose records up to `upTo` are on disk (or whose sync failed).
    void settleWaiters(quint64 upTo);

    struct Waiter
    {
        quint64 seq; // durable once records up to this one are
        std::function<void()> then;
        QString failure; // why its record was lost (then it waits for what was written before)
    };

    AuditOptions m_options;
    UniqueFd m_fd;
    qint64 m_size = 0;
    quint64 m_seq = 0; // the last record sealed
    QByteArray m_lastHash;
    // The records sealed but not written yet (finished records), in the chain's order after the
    // last record written, which is m_writtenSeq with the hash m_writtenHash.
    QByteArray m_deferred;
    quint64 m_deferredRecords = 0;
    quint64 m_writtenSeq = 0;
    QByteArray m_writtenHash;
    QString m_settlingFailure; // the failure of the waiter being released
    QString m_lastError; // of the last append
    QString m_syncError; // of the last sync
    quint64 m_lost = 0; // records that could not be written since the last one that was
    quint64 m_durableSeq = 0; // every record up to this one is on disk
    quint64 m_requestedSeq = 0; // the sync thread has been asked for every record up to this one
    quint64 m_inlineSyncs = 0; // fdatasync calls on this thread (a durable append, a rotation)
    bool m_syncOnLoop = false; // the file system's fdatasync returns at once (tmpfs)
    std::vector<Waiter> m_waiting;
    // The buffers every call's record is built and sealed in, kept from one record to the next.
    audit::RecordFields m_fields;
    audit::SealedRecord m_sealed;
    QTimer m_endOfPass; // writes the deferred records and asks for the next sync
    std::unique_ptr<audit::SyncThread> m_syncThread; // fdatasync off the event loop
};

} // namespace cmcp
