#pragma once

#include "jobs/BackgroundJob.h"
#include "jobs/CallTemplate.h"
#include "sandbox/JobRequest.h"
#include "jobs/JobServices.h"
#include "sandbox/SandboxSupervisor.h"
#include "jobs/WarmJobPool.h"

#include <QHash>
#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>

namespace cmcp {

class McpServer;
class SessionWorkspaces;
class Settings;
class ToolCall;

// Runs the jobs tools ask for: as a call's own job (ForegroundJob), forked from its kind's
// template (CallTemplate, a ForkedJob) when one has a cell idle, else taken from the jobs started
// ahead for its kind (WarmJobPool, without templates) or a jail of its own; or as a job that
// goes on after its call (BackgroundJob, in the registry). Places each job in the calling session's
// workspace. One per server, its child: the system tools start jobs through it and the job tools
// reach the background jobs and output handles through services().
class JobRunner : public QObject
{
    Q_OBJECT
public:
    using ResultMaker = JobAdapter::ResultMaker;

    // The server's runner, made (with its registry, handles and supervisor) on first use.
    static JobRunner &of(McpServer &server, const Settings &settings);

    const JobServices &services() const { return m_services; }
    // Serves the jobs whose network goes through the egress gate (before keepWarm).
    void setEgress(std::shared_ptr<JobEgress> egress) { m_supervisor.setEgress(std::move(egress)); }

    // Keeps calls of `kind` ready, replacing what was kept for it before (built from an older
    // policy): with JOB_CALL_TEMPLATES a template (CallTemplate) of `forTemplate`, whose cells
    // fork calls, `size` of them kept idle (at least one), retiring the template kept before;
    // without, `size` jobs like `awaiting` started and waiting for their input. Nothing when no
    // job can start (`jobsCanStart`: the identity layer is there) or in per-session workspaces,
    // which a job started ahead cannot know.
    void keepWarm(const QString &kind, const JobRequest &awaiting, const JobRequest &forTemplate,
                  int size, bool jobsCanStart);

    // A call's own job, finishing the call with its result; `kind` names the warm jobs it may
    // take.
    void runInForeground(const std::shared_ptr<ToolCall> &call, JobRequest request,
                         const QString &kind, ResultMaker makeResult);
    // A job that outlives its call: the call gets the job's id, or with `yieldMs` possibly its
    // result. The job's limit is description.timeoutSeconds.
    void runInBackground(const std::shared_ptr<ToolCall> &call, JobRequest request,
                         BackgroundJob::Description description, std::optional<int> yieldMs,
                         ResultMaker makeResult);

    // A background job's limit: JOB_TIMEOUT_MAX, which the call's timeout may only lower.
    int backgroundTimeoutSeconds(std::optional<qint64> asked) const;
    void setTimeoutMaxSeconds(int seconds) { m_services.timeoutMaxSeconds = seconds; }

private:
    JobRunner(McpServer &server, const Settings &settings);
    bool placeInWorkspace(const ToolCall &call, JobRequest &request, QString *error);
    // Why the call may not start its own job now, naming the cap; empty when it may.
    QString foregroundRefusal(const ToolCall &call) const;
    void countForeground(const ToolCall &call, Job *job);
    // A call's job forked from the template of `kind`, started; false when none has a cell
    // idle (the call then starts its own jail).
    bool runForked(const std::shared_ptr<ToolCall> &call, const JobRequest &request,
                   const QString &kind, ResultMaker &makeResult);

    // The caps on calls' own jobs running at once: each holds a uid of the pool, so without
    // them one client's burst of calls would leave no uid for anyone else.
    struct ForegroundLimits
    {
        int perSession = 16; // JOB_FOREGROUND_MAX_PER_SESSION
        int perPrincipal = 64; // JOB_FOREGROUND_MAX_PER_PRINCIPAL
    };
    ForegroundLimits m_foregroundLimits;
    QHash<QString, int> m_foregroundBySession;
    QHash<QString, int> m_foregroundByPrincipal;

    SandboxSupervisor m_supervisor;
    JobServices m_services;
    SessionWorkspaces *m_workspaces;
    std::map<QString, std::unique_ptr<WarmJobPool>> m_warm; // by kind
    // JOB_CALL_TEMPLATES: calls without a working directory fork from these, by kind.
    bool m_templatesWanted = false;
    QString m_templateDirectory;
    int m_templatesMade = 0;
    // Children of this runner; one being replaced is retired (it ends once its calls have).
    std::map<QString, CallTemplate *> m_templates;
    void keepTemplate(const QString &kind, const JobRequest &forTemplate, int spareCells);
    void retireTemplate(const QString &kind);
    // What keepWarm was asked to keep for each kind, to start again when the workspace is
    // replaced.
    struct Kept
    {
        JobRequest awaiting;
        JobRequest forTemplate;
        int size = 0;
        bool jobsCanStart = false;
    };
    std::map<QString, Kept> m_kept;
    void startKept(const QString &kind);
    QJsonObject templatesStatus() const;
    McpServer &m_server;
};

} // namespace cmcp
