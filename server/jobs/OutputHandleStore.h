#pragma once

#include "jobs/JobOutputLog.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QObject>
#include <QString>
#include <QTimer>

#include <optional>

namespace cmcp {

// The complete outputs of tool results that were cut to fit (the jail's spill files), each
// behind an unguessable handle that only the session which received it can read, for a bounded
// time. The store owns the files: it deletes each one when its handle expires, when its session
// ends, and when the store goes.
class OutputHandleStore : public QObject
{
    Q_OBJECT
public:
    explicit OutputHandleStore(int lifetimeSeconds, QObject *parent = nullptr);
    ~OutputHandleStore() override;

    // Takes the file at `path` (complete, closed) and returns its handle.
    QString add(const QString &sessionId, const QString &path, qint64 totalBytes);
    // A window of the output. nullopt with a reason when the handle is not this session's (or
    // never existed), has expired, or offset lies beyond the output.
    std::optional<OutputWindow> read(const QString &sessionId, const QString &handle, qint64 offset,
                                     qint64 length, QString *error) const;
    // Every handle of the session goes, with its file.
    void endSession(const QString &sessionId);

    int size() const { return int(m_entries.size()); }

private:
    struct Entry
    {
        QString sessionId;
        QString path;
        qint64 totalBytes = 0;
        QDeadlineTimer expiry;
    };

    void expire();
    void schedule();
    void drop(const QString &handle, bool remember);

    const int m_lifetimeSeconds;
    QHash<QString, Entry> m_entries;
    // Expired handles and their sessions, so that a late read says "expired" rather than
    // "unknown"; bounded, the oldest forgotten first.
    QHash<QString, QString> m_expired;
    QList<QString> m_expiredOrder;
    QTimer m_timer;

    static constexpr int kExpiredRemembered = 4096;
};

} // namespace cmcp
