#pragma once

#include <QByteArray>
#include <QFile>
#include <QString>

#include <optional>

namespace cmcp {

// What one read of a job's output returned.
struct OutputWindow
{
    QByteArray bytes;
    qint64 offset = 0; // where bytes start
    qint64 nextOffset = 0; // where the next read continues
    qint64 totalBytes = 0; // kept so far
};

// A background job's output, standard output and error interleaved as they arrive (as a
// terminal would show them: a REPL prompts on one and answers on the other), appended to a
// file of its own (mode 0600) so that a long job costs no memory, and read back in windows by
// byte offset. Beyond `capBytes` the output is counted but dropped.
class JobOutputLog
{
public:
    JobOutputLog(QString path, qint64 capBytes);
    ~JobOutputLog(); // removes the file
    JobOutputLog(const JobOutputLog &) = delete;
    JobOutputLog &operator=(const JobOutputLog &) = delete;

    // False with a reason when the file cannot be created.
    bool open(QString *error);
    void append(const QByteArray &bytes);

    qint64 keptBytes() const { return m_kept; }
    qint64 droppedBytes() const { return m_dropped; }
    // Up to `limit` bytes from `offset`. A window that would end inside a UTF-8 sequence ends
    // before it (the next read starts there), so each window decodes on its own. nullopt with a
    // reason when offset lies beyond what was kept or the file cannot be read.
    std::optional<OutputWindow> read(qint64 offset, qint64 limit, QString *error) const;

private:
    QString m_path;
    qint64 m_cap;
    QFile m_file;
    qint64 m_kept = 0;
    qint64 m_dropped = 0;
};

// The length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence (at
// least 1 for a non-empty window, so that invalid bytes never stall a reader).
qsizetype utf8BoundaryPrefix(const QByteArray &bytes);

} // namespace cmcp
