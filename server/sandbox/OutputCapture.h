#pragma once

#include "sandbox/JobResult.h"

#include <QByteArray>
#include <QFile>
#include <QString>

#include <memory>

namespace cmcp {

// One output stream of a job, kept within a cap: while the output fits, all of it; beyond the
// cap, its first half and its last half, and the complete output in a spill file (mode 0600)
// that is written as the bytes arrive. Memory stays within about twice the cap whatever the
// job prints; small outputs never touch the disk.
class OutputCapture
{
public:
    // `spillPath` is created (exclusively) only when the output overflows the cap; empty means
    // no spill file. `capBytes` is at least 2.
    OutputCapture(qint64 capBytes, QString spillPath);
    ~OutputCapture();
    OutputCapture(const OutputCapture &) = delete;
    OutputCapture &operator=(const OutputCapture &) = delete;

    void append(const QByteArray &bytes);
    // Closes the spill file; later appends are ignored.
    void finish();

    qint64 totalBytes() const { return m_totalBytes; }
    bool truncated() const { return m_totalBytes > m_capBytes; }
    // The whole output when it fits the cap; otherwise its first bytes (half the cap).
    QByteArray head() const { return m_head; }
    // Empty when the output fits the cap; otherwise its last bytes (the other half).
    QByteArray tail() const;
    // The file holding the complete output: set only once the output overflowed and every
    // byte reached the file.
    QString spillPath() const;
    // Why the spill file is incomplete or missing (it is then removed); empty otherwise.
    QString spillError() const { return m_spillError; }
    // All of the above, as a result carries it.
    CapturedStream captured() const;

private:
    void startSpilling(const QByteArray &bytes);
    void spill(const QByteArray &bytes);
    void abandonSpill(const QString &why);
    void keepTail(const QByteArray &bytes);

    const qint64 m_capBytes;
    const qint64 m_headCap;
    const qint64 m_tailCap;
    const QString m_spillPath;
    std::unique_ptr<QFile> m_spillFile;
    QString m_spillError;
    QByteArray m_head;
    QByteArray m_tail; // the last m_tailCap bytes are kept, trimmed in batches
    qint64 m_totalBytes = 0;
    bool m_finished = false;
};

} // namespace cmcp
