#include "jobs/JobStarter.h"

#include "jobs/JobRegistry.h"
#include "jobs/JobServices.h"
#include "mcp/ToolCall.h"
#include "base/ReplicaHandle.h"
#include "base/UnguessableId.h"

#include <QDir>
#include <QPointer>
#include <QTimer>

namespace cmcp {

namespace {

// The tool's usual result for a job that ended before its call yielded. A cut output stays
// readable through the job; otherwise the job is done with.
ToolResult resultAtYield(BackgroundJob &job, const QPointer<JobRegistry> &registry)
{
    ToolResult result = job.toolResult();
    if (job.result()->truncated() && result.structuredContent) {
        QJsonObject value = *result.structuredContent;
        value.insert(QLatin1String("job_id"), job.id());
        value.insert(QLatin1String("note"),
                     QStringLiteral("The output was cut to fit; read all of it with job_output "
                                    "(job_id, offset)."));
        return ToolResult::structured(value, result.isError);
    }
    if (registry)
        registry->remove(job.id());
    return result;
}

} // namespace

ToolResult startedResult(const BackgroundJob &job, std::optional<int> yieldedAfterMs)
{
    QString message = QStringLiteral("The job runs in the background. Read its output with "
                                     "job_output (job_id, offset), its state with job_status; "
                                     "stop it with job_kill.");
    if (job.description().interactive)
        message += QStringLiteral(" Send it input with job_write_stdin.");
    if (yieldedAfterMs)
        message.prepend(QStringLiteral("Still running after %1 ms. ").arg(*yieldedAfterMs));
    QJsonObject value{{QLatin1String("success"), true},
                      {QLatin1String("job_id"), job.id()},
                      {QLatin1String("status"), QLatin1String("running")},
                      {QLatin1String("interactive"), job.description().interactive},
                      {QLatin1String("timeout_seconds"), job.description().timeoutSeconds},
                      {QLatin1String("note"), message}};
    return ToolResult::structured(value);
}

void startBackgroundJob(const JobServices &services, const std::shared_ptr<ToolCall> &call,
                        BackgroundStart start)
{
    JobRegistry &registry = *services.registry;
    start.description.principal = call->principal().name();
    if (const QString refusal = registry.refusal(call->sessionId(), start.description.principal);
        !refusal.isEmpty()) {
        call->finish(ToolResult::structuredFailure(refusal));
        return;
    }
    QString error;
    JailJob *jailJob = services.supervisor->createJob(start.request, nullptr, &error);
    if (!jailJob) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    const QString id = replicaHandle("job_");
    // The log's name is not the job's id: the id is a secret of the session, file names are not.
    auto log = std::make_unique<JobOutputLog>(
            QDir(services.fileDirectory).filePath(unguessableId("log_")),
            services.outputLogCapBytes);
    if (!log->open(&error)) {
        delete jailJob;
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    auto *job = new BackgroundJob(id, call->sessionId(), start.description, jailJob, std::move(log),
                                  std::move(start.makeResult));
    registry.add(job);
    job->start();

    if (!start.yieldMs) {
        call->finish(startedResult(*job, std::nullopt));
        return;
    }
    // Until the yield, the call and the job are one: a cancelled call kills the job. The
    // connections hold the call weakly (a strong reference in objects the call owns would keep
    // it alive forever) and take a strong one while finishing it, since finishing may drop the
    // core's last reference.
    ToolCall *waiting = call.get();
    const std::weak_ptr<ToolCall> weakCall = call;
    QPointer<BackgroundJob> guard(job);
    QPointer<JobRegistry> registryGuard(&registry);
    auto *timer = new QTimer(waiting);
    timer->setSingleShot(true);
    QObject::connect(timer, &QTimer::timeout, waiting, [weakCall, guard, yieldMs = *start.yieldMs] {
        const std::shared_ptr<ToolCall> call = weakCall.lock();
        if (call && guard && !call->isFinished())
            call->finish(startedResult(*guard, yieldMs));
    });
    QObject::connect(job, &BackgroundJob::finished, waiting,
                     [weakCall, guard, registryGuard, timer] {
                         timer->stop();
                         const std::shared_ptr<ToolCall> call = weakCall.lock();
                         if (!call || !guard || call->isFinished() || call->isCancelled())
                             return;
                         call->finish(resultAtYield(*guard, registryGuard));
                     });
    QObject::connect(waiting, &ToolCall::cancelled, job, [guard, registryGuard] {
        if (guard && registryGuard && guard->isRunning())
            registryGuard->remove(guard->id());
    });
    timer->start(*start.yieldMs);
}

} // namespace cmcp
