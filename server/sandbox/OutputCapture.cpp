#include "sandbox/OutputCapture.h"

namespace cmcp {

OutputCapture::OutputCapture(qint64 capBytes, QString spillPath)
    : m_capBytes(qMax<qint64>(capBytes, 2)),
      m_headCap(m_capBytes / 2),
      m_tailCap(m_capBytes - m_headCap),
      m_spillPath(std::move(spillPath))
{
}

OutputCapture::~OutputCapture()
{
    finish();
}

void OutputCapture::append(const QByteArray &bytes)
{
    if (m_finished || bytes.isEmpty())
        return;
    const bool wasTruncated = truncated();
    m_totalBytes += bytes.size();
    if (!wasTruncated) {
        if (!truncated()) {
            m_head.append(bytes);
            return;
        }
        // The cap is crossed now: everything so far goes to the spill file, then the head is
        // cut to its half and the rest becomes the beginning of the tail.
        QByteArray all = m_head + bytes;
        startSpilling(all);
        m_head = all.left(m_headCap);
        keepTail(all.mid(m_headCap));
        return;
    }
    spill(bytes);
    keepTail(bytes);
}

void OutputCapture::keepTail(const QByteArray &bytes)
{
    if (bytes.size() >= m_tailCap) {
        m_tail = bytes.right(m_tailCap);
        return;
    }
    m_tail.append(bytes);
    // Trimming on every append would move up to m_tailCap bytes per chunk; trimming once the
    // buffer holds twice that keeps the copying linear in the output size.
    if (m_tail.size() > 2 * m_tailCap)
        m_tail.remove(0, m_tail.size() - m_tailCap);
}

QByteArray OutputCapture::tail() const
{
    return m_tail.right(m_tailCap);
}

QString OutputCapture::spillPath() const
{
    return truncated() && m_spillError.isEmpty() && !m_spillPath.isEmpty() ? m_spillPath
                                                                           : QString();
}

void OutputCapture::startSpilling(const QByteArray &bytes)
{
    if (m_spillPath.isEmpty())
        return;
    m_spillFile = std::make_unique<QFile>(m_spillPath);
    // NewOnly is O_EXCL: an existing file (or a symlink planted in its place) is never written.
    if (!m_spillFile->open(QIODevice::WriteOnly | QIODevice::NewOnly | QIODevice::Unbuffered,
                           QFileDevice::ReadOwner | QFileDevice::WriteOwner)) {
        const QString why = m_spillFile->errorString();
        m_spillFile.reset();
        m_spillError = QStringLiteral("cannot create %1: %2").arg(m_spillPath, why);
        return;
    }
    spill(bytes);
}

void OutputCapture::spill(const QByteArray &bytes)
{
    if (!m_spillFile)
        return;
    if (m_spillFile->write(bytes) != bytes.size())
        abandonSpill(QStringLiteral("writing %1 failed: %2")
                             .arg(m_spillPath, m_spillFile->errorString()));
}

void OutputCapture::abandonSpill(const QString &why)
{
    m_spillError = why;
    m_spillFile->close();
    m_spillFile->remove();
    m_spillFile.reset();
}

void OutputCapture::finish()
{
    if (m_finished)
        return;
    m_finished = true;
    if (m_spillFile && !m_spillFile->flush())
        abandonSpill(QStringLiteral("writing %1 failed: %2")
                             .arg(m_spillPath, m_spillFile->errorString()));
    if (m_spillFile)
        m_spillFile->close();
    m_spillFile.reset();
}

CapturedStream OutputCapture::captured() const
{
    CapturedStream stream;
    stream.head = head();
    stream.tail = tail();
    stream.totalBytes = totalBytes();
    stream.truncated = truncated();
    stream.spillPath = spillPath();
    stream.spillError = spillError();
    return stream;
}

} // namespace cmcp
