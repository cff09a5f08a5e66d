#include "jobs/OutputHandleStore.h"

#include "base/ReplicaHandle.h"

#include <QFile>

#include <limits>

namespace cmcp {

OutputHandleStore::OutputHandleStore(int lifetimeSeconds, QObject *parent)
    : QObject(parent),
      m_lifetimeSeconds(lifetimeSeconds)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &OutputHandleStore::expire);
}

OutputHandleStore::~OutputHandleStore()
{
    for (const Entry &entry : std::as_const(m_entries))
        QFile::remove(entry.path);
}

QString OutputHandleStore::add(const QString &sessionId, const QString &path, qint64 totalBytes)
{
    const QString handle = replicaHandle("out_");
    m_entries.insert(handle,
                     Entry{sessionId, path, totalBytes,
                           QDeadlineTimer(std::chrono::seconds(m_lifetimeSeconds))});
    schedule();
    return handle;
}

std::optional<OutputWindow> OutputHandleStore::read(const QString &sessionId, const QString &handle,
                                                    qint64 offset, qint64 length,
                                                    QString *error) const
{
    const auto entry = m_entries.constFind(handle);
    if (entry == m_entries.cend() || entry->sessionId != sessionId) {
        const auto expired = m_expired.constFind(handle);
        *error = expired != m_expired.cend() && *expired == sessionId
                ? QStringLiteral("output handle %1 has expired (handles last "
                                 "OUTPUT_HANDLE_SECONDS = %2 s); run the tool again")
                          .arg(handle)
                          .arg(m_lifetimeSeconds)
                : QStringLiteral("no such output handle: %1 (handles belong to the session "
                                 "that received them)")
                          .arg(handle);
        return std::nullopt;
    }
    if (entry->expiry.hasExpired()) {
        *error = QStringLiteral("output handle %1 has expired (handles last "
                                "OUTPUT_HANDLE_SECONDS = %2 s); run the tool again")
                         .arg(handle)
                         .arg(m_lifetimeSeconds);
        return std::nullopt;
    }
    if (offset < 0 || offset > entry->totalBytes) {
        *error = QStringLiteral("offset %1 is beyond the output (%2 bytes)")
                         .arg(offset)
                         .arg(entry->totalBytes);
        return std::nullopt;
    }
    QFile file(entry->path);
    if (!file.open(QIODevice::ReadOnly) || !file.seek(offset)) {
        *error = QStringLiteral("cannot read output %1: %2").arg(handle, file.errorString());
        return std::nullopt;
    }
    OutputWindow window;
    window.offset = offset;
    window.totalBytes = entry->totalBytes;
    window.bytes = file.read(qMin(length, entry->totalBytes - offset));
    if (offset + window.bytes.size() < entry->totalBytes)
        window.bytes.truncate(utf8BoundaryPrefix(window.bytes));
    window.nextOffset = offset + window.bytes.size();
    return window;
}

void OutputHandleStore::endSession(const QString &sessionId)
{
    QStringList handles;
    for (auto it = m_entries.cbegin(); it != m_entries.cend(); ++it) {
        if (it->sessionId == sessionId)
            handles.append(it.key());
    }
    for (const QString &handle : handles)
        drop(handle, false);
    schedule();
}

void OutputHandleStore::expire()
{
    QStringList due;
    for (auto it = m_entries.cbegin(); it != m_entries.cend(); ++it) {
        if (it->expiry.hasExpired())
            due.append(it.key());
    }
    for (const QString &handle : due)
        drop(handle, true);
    schedule();
}

void OutputHandleStore::drop(const QString &handle, bool remember)
{
    const Entry entry = m_entries.take(handle);
    QFile::remove(entry.path);
    if (!remember)
        return;
    m_expired.insert(handle, entry.sessionId);
    m_expiredOrder.append(handle);
    while (m_expiredOrder.size() > kExpiredRemembered)
        m_expired.remove(m_expiredOrder.takeFirst());
}

// One timer, set for the next expiry.
void OutputHandleStore::schedule()
{
    if (m_entries.isEmpty()) {
        m_timer.stop();
        return;
    }
    qint64 nextMs = std::numeric_limits<qint64>::max();
    for (const Entry &entry : std::as_const(m_entries))
        nextMs = qMin(nextMs, entry.expiry.remainingTime());
    m_timer.start(int(qBound<qint64>(0, nextMs, qint64(std::numeric_limits<int>::max()))));
}

} // namespace cmcp
