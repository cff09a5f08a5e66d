#pragma once

#include "common/AdminCallRecords.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QTimer>

namespace cmcp {

// The progress of running calls as the admin channel shows it. Jobs report their output as
// often as it arrives; this gathers it and gives it out as progress records
// at most once every `intervalMs`, each call's latest figures only, so that a call printing a
// megabyte a second costs the consoles four small events a second.
class CallProgress : public QObject
{
    Q_OBJECT
public:
    explicit CallProgress(int intervalMs, QObject *parent = nullptr);

    void started(quint64 callId, const QDateTime &startedAt);
    void output(quint64 callId, qint64 outputBytes);
    void finished(quint64 callId);

    // The figures of a running call that has reported output, else nullopt: for snapshots, so
    // that a console reloading one keeps them.
    std::optional<admin::CallFigures> figures(quint64 callId) const;

Q_SIGNALS:
    void progress(const cmcp::admin::ProgressRecord &progress);

private:
    struct Running
    {
        QDateTime startedAt;
        qint64 outputBytes = -1; // -1: none reported yet
        bool pending = false;
    };
    void flush();

    QHash<quint64, Running> m_running;
    QTimer m_timer;
};

} // namespace cmcp
