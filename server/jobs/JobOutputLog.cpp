#include "jobs/JobOutputLog.h"

namespace cmcp {

JobOutputLog::JobOutputLog(QString path, qint64 capBytes)
    : m_path(std::move(path)),
      m_cap(capBytes),
      m_file(m_path)
{
}

JobOutputLog::~JobOutputLog()
{
    if (m_file.isOpen()) {
        m_file.close();
        QFile::remove(m_path);
    }
}

bool JobOutputLog::open(QString *error)
{
    if (!m_file.open(QIODevice::ReadWrite | QIODevice::NewOnly | QIODevice::Unbuffered,
                     QFileDevice::ReadOwner | QFileDevice::WriteOwner)) {
        *error = QStringLiteral("cannot create the job's output file %1: %2")
                         .arg(m_path, m_file.errorString());
        return false;
    }
    return true;
}

void JobOutputLog::append(const QByteArray &bytes)
{
    const qint64 room = qMax<qint64>(0, m_cap - m_kept);
    const qint64 keep = qMin<qint64>(room, bytes.size());
    if (keep > 0 && m_file.isOpen()) {
        m_file.seek(m_kept);
        const qint64 written = m_file.write(bytes.constData(), keep);
        m_kept += qMax<qint64>(0, written);
        m_dropped += bytes.size() - qMax<qint64>(0, written);
        return;
    }
    m_dropped += bytes.size();
}

std::optional<OutputWindow> JobOutputLog::read(qint64 offset, qint64 limit, QString *error) const
{
    if (offset < 0 || offset > m_kept) {
        *error = QStringLiteral("offset %1 is beyond the output kept so far (%2 bytes)")
                         .arg(offset)
                         .arg(m_kept);
        return std::nullopt;
    }
    OutputWindow window;
    window.offset = offset;
    window.totalBytes = m_kept;
    const qint64 length = qMin(limit, m_kept - offset);
    if (length > 0) {
        // A second handle: reads never disturb the append position.
        QFile reader(m_path);
        if (!reader.open(QIODevice::ReadOnly) || !reader.seek(offset)) {
            *error = QStringLiteral("cannot read the job's output: %1").arg(reader.errorString());
            return std::nullopt;
        }
        window.bytes = reader.read(length);
        if (offset + window.bytes.size() < m_kept)
            window.bytes.truncate(utf8BoundaryPrefix(window.bytes));
    }
    window.nextOffset = offset + window.bytes.size();
    return window;
}

qsizetype utf8BoundaryPrefix(const QByteArray &bytes)
{
    const qsizetype size = bytes.size();
    // Look back at most 3 bytes for the lead byte of the last sequence.
    for (qsizetype back = 1; back <= qMin<qsizetype>(4, size); ++back) {
        const uchar byte = uchar(bytes.at(size - back));
        if ((byte & 0xC0) == 0x80)
            continue; // a continuation byte
        const int needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
        if (needed > back && size - back > 0)
            return size - back; // the sequence is incomplete: end before its lead byte
        return size;
    }
    return size;
}

} // namespace cmcp
