#include "admin/CallProgress.h"

namespace cmcp {

CallProgress::CallProgress(int intervalMs, QObject *parent) : QObject(parent)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &CallProgress::flush);
}

void CallProgress::started(quint64 callId, const QDateTime &startedAt)
{
    m_running.insert(callId, {startedAt, -1, false});
}

void CallProgress::output(quint64 callId, qint64 outputBytes)
{
    const auto found = m_running.find(callId);
    if (found == m_running.end())
        return;
    found->outputBytes = outputBytes;
    found->pending = true;
    // The first output of a quiet period waits one interval, and brings its successors along.
    if (!m_timer.isActive())
        m_timer.start();
}

void CallProgress::finished(quint64 callId)
{
    m_running.remove(callId);
}

std::optional<admin::CallFigures> CallProgress::figures(quint64 callId) const
{
    const auto found = m_running.constFind(callId);
    if (found == m_running.cend() || found->outputBytes < 0)
        return std::nullopt;
    return admin::CallFigures{found->startedAt.msecsTo(QDateTime::currentDateTimeUtc()),
                              found->outputBytes};
}

void CallProgress::flush()
{
    for (auto it = m_running.begin(); it != m_running.end(); ++it) {
        if (!it->pending)
            continue;
        it->pending = false;
        if (const std::optional<admin::CallFigures> latest = figures(it.key()))
            Q_EMIT progress({qint64(it.key()), *latest});
    }
}

} // namespace cmcp
