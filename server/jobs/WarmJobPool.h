#pragma once

#include "sandbox/JobResult.h"
#include "sandbox/SandboxSupervisor.h"

#include <QList>
#include <QObject>

namespace cmcp {

class JailJob;

// Keeps up to `size` jobs of one kind started and waiting for their input (JobSpec::awaitInput),
// so that a call gets a job whose jail is built and whose interpreter has started already. Each
// job serves one call and ends with it: a call's isolation is that of a job started for it
// alone. A job that ends while waiting is not replaced until the next take(), so a machine that
// cannot start jobs does not spin.
class WarmJobPool : public QObject
{
    Q_OBJECT
public:
    WarmJobPool(SandboxSupervisor &supervisor, JobRequest request, int size,
                QObject *parent = nullptr);

    // A running job waiting for its input, with no parent (the caller owns it now), or nullptr
    // when none is ready. Starts its replacement once the event loop is back.
    JailJob *take();
    const JobRequest &request() const { return m_request; }
    int size() const { return m_size; }

private:
    void refill();
    void onEndedWhileWaiting(JailJob *job, const JobResult &result);

    SandboxSupervisor &m_supervisor;
    JobRequest m_request;
    const int m_size;
    QList<JailJob *> m_ready;
    bool m_refillScheduled = false;
    bool m_paused = false;
};

} // namespace cmcp
