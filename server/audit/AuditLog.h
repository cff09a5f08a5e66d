#pragma once

#include "mcp/ToolCallRecord.h"
#include "posix/UniqueFd.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <optional>

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

    // Creates the directory and file when needed, resumes the chain and writes `audit_opened`.
    bool open(QString *error);

    // Appends one record (seq, prev and hash are added). `durable`: fdatasync before returning.
    bool append(const QJsonObject &fields, bool durable = true);

    // Why the last append failed; empty when it succeeded.
    QString lastError() const { return m_lastError; }
    // Non-empty when the call in progress must fail closed: the log is required and the last
    // record could not be written.
    QString failClosedReason() const;

    quint64 lastSeq() const { return m_seq; }

public Q_SLOTS:
    // The call_started record is written without its own fdatasync: the call_finished record's
    // fdatasync makes both durable, and a crash in between loses at most evidence of a start.
    // Called on the server's thread (McpServer emits there), like every other member.
    void recordCallStarted(const cmcp::ToolCallRecord &call);
    void recordCallFinished(const cmcp::ToolCallRecord &call, const cmcp::ToolResult *result);

private:
    bool openFile(QString *error);
    bool resumeChain(QString *error);
    bool rotate(QString *error);
    bool writeLine(const QByteArray &line, bool durable, QString *error);
    bool appendSealed(const QJsonObject &fields, bool durable, QString *error);

    AuditOptions m_options;
    UniqueFd m_fd;
    qint64 m_size = 0;
    quint64 m_seq = 0;
    QByteArray m_lastHash;
    QString m_lastError;
    quint64 m_lost = 0; // records that could not be written since the last one that was
};

} // namespace cmcp
