#include "jobs/WarmJobPool.h"

#include "sandbox/JailJob.h"

#include <QTimer>

#include <spdlog/spdlog.h>

namespace cmcp {

WarmJobPool::WarmJobPool(SandboxSupervisor &supervisor, JobRequest request, int size,
                         QObject *parent)
    : QObject(parent),
      m_supervisor(supervisor),
      m_request(std::move(request)),
      m_size(size)
{
    m_request.awaitInput = true;
    refill();
}

JailJob *WarmJobPool::take()
{
    m_paused = false;
    JailJob *job = nullptr;
    while (!m_ready.isEmpty() && !job) {
        JailJob *candidate = m_ready.takeFirst();
        candidate->disconnect(this);
        if (candidate->isRunning()) {
            job = candidate;
            job->setParent(nullptr);
        } else {
            candidate->deleteLater();
        }
    }
    // After the caller has handed its input over: the replacement's start must not delay it.
    if (!m_refillScheduled) {
        m_refillScheduled = true;
        QTimer::singleShot(0, this, [this] {
            m_refillScheduled = false;
            refill();
        });
    }
    return job;
}

void WarmJobPool::refill()
{
    while (!m_paused && m_ready.size() < m_size) {
        QString error;
        JailJob *job = m_supervisor.createJob(m_request, this, &error);
        if (!job)
            return; // every uid is busy: calls start their own jobs meanwhile
        connect(job, &JailJob::finished, this,
                [this, job](const JobResult &result) { onEndedWhileWaiting(job, result); });
        job->start();
        m_ready.append(job);
    }
}

void WarmJobPool::onEndedWhileWaiting(JailJob *job, const JobResult &result)
{
    m_ready.removeOne(job);
    job->deleteLater();
    m_paused = true;
    // Why, so that a job every call would fail in the same way (a workspace it cannot reach,
    // no cmcp-jail) is named in the log before the first call.
    spdlog::warn("sandbox: a pre-started job ended while waiting for its call ({}); the next "
                 "call starts its own",
                 result.endReason().toStdString());
}

} // namespace cmcp
