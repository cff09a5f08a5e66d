#pragma once

#include "sandbox/JobResult.h"

#include <QByteArray>
#include <QObject>
#include <QString>

#include <memory>

namespace cmcp {

enum class JobStream { StandardOutput, StandardError };

// One job of a tool's call, however it runs: a jail built for it (JailJob) or a fork of a
// template's cell (ForkedJob). Output is reported as it arrives, the end once, with the job's
// accounting; a cancelled or timed-out job is killed as a whole.
class Job : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    // Kept until the job and every process of it have ended: whoever gave it (the session
    // workspaces) does not remove the job's workspace before.
    virtual void setWorkspaceHold(std::shared_ptr<const void> hold) = 0;
    // Call once, after connecting to the signals.
    virtual void start() = 0;
    // Kills the running job (result: cancelled). No effect on a job not running.
    virtual void cancel() = 0;
    virtual bool isRunning() const = 0;
    // The workspace on the host the job runs in.
    virtual QString workspace() const = 0;

Q_SIGNALS:
    // Bytes as they arrive, before any cap (to stream them as progress).
    void outputReceived(cmcp::JobStream stream, const QByteArray &bytes);
    // Emitted once, after start(). Do not delete the job from a slot: use deleteLater().
    void finished(const cmcp::JobResult &result);
};

} // namespace cmcp
