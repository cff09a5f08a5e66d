#include "jobs/JobRunner.h"

#include "jobs/ForegroundJob.h"
#include "sandbox/ForkedJob.h"
#include "sandbox/TemplateCell.h"
#include "jobs/JobRegistry.h"
#include "jobs/JobStarter.h"
#include "mcp/McpServer.h"
#include "jobs/OutputHandleStore.h"
#include "workspace/SessionWorkspaces.h"
#include "common/Settings.h"
#include "mcp/ToolCall.h"
#include "posix/OwnDirectory.h"
#include "workspace/Workspace.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>

#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace cmcp {

namespace {

SandboxOptions sandboxOptions(const Settings &settings)
{
    SandboxOptions options = SandboxOptions::fromSettings(settings);
    options.spillDirectory = JobServices::fileDirectoryFromSettings(settings);
    return options;
}

} // namespace

JobRunner &JobRunner::of(McpServer &server, const Settings &settings)
{
    if (auto *existing = server.findChild<JobRunner *>(QStringLiteral("cmcp::JobRunner"),
                                                       Qt::FindDirectChildrenOnly))
        return *existing;
    auto *runner = new JobRunner(server, settings);
    runner->setObjectName(QStringLiteral("cmcp::JobRunner"));
    return *runner;
}

// The background-job registry, the output handles and the workspaces of the sessions, and what
// a session's end does to them: its jobs are killed and its handles deleted (SessionWorkspaces
// removes its workspace).
JobRunner::JobRunner(McpServer &server, const Settings &settings)
    : QObject(&server),
      m_supervisor(sandboxOptions(settings)),
      m_workspaces(&SessionWorkspaces::of(server, settings)),
      m_server(server)
{
    m_templatesWanted = settings.flag(u"JOB_CALL_TEMPLATES")
            && m_supervisor.options().templatesUnavailable().isEmpty();
    m_templateDirectory = Workspace::sandboxRoot(settings) + QStringLiteral("/templates");
    if (const QString why = m_supervisor.showWorkspacesAsOwn(
                Workspace::fromSettings(settings).storeDirectory());
        !why.isEmpty())
        spdlog::info("sandbox: jobs see workspace files as they are on disk: {}",
                     why.toStdString());
    server.health().describeLive(QStringLiteral("call_templates"),
                                 [this] { return templatesStatus(); });
    JobServices &jobs = m_services;
    jobs.supervisor = &m_supervisor;
    jobs.fileDirectory = m_supervisor.options().spillDirectory;
    // Without it the tools still work: a truncated output says its copy could not be kept and
    // a background job cannot start, each with the reason.
    if (QString why; !JobServices::prepareFileDirectory(jobs.fileDirectory, &why))
        server.health().report(
                {QStringLiteral("spill directory %1").arg(jobs.fileDirectory),
                 why
                         + QStringLiteral(": no complete copy of long outputs, no output handles, "
                                          "no background jobs"),
                 QStringLiteral("let cmcpd (root) create and write it: SANDBOX_ROOT on a "
                                "writable file system, nothing else at that path"),
                 {QStringLiteral("output_read"), QStringLiteral("job_attach"),
                  QStringLiteral("job_output"), QStringLiteral("job_write_stdin")}});
    jobs.outputLogCapBytes = settings.integer(u"JOB_OUTPUT_MAX_MB") * 1024 * 1024;
    jobs.timeoutMaxSeconds = int(settings.integer(u"JOB_TIMEOUT_MAX"));
    JobRegistry::Limits limits;
    limits.perSession = int(settings.integer(u"JOB_MAX_PER_SESSION"));
    limits.perPrincipal = int(settings.integer(u"JOB_MAX_PER_PRINCIPAL"));
    limits.total = int(settings.integer(u"JOB_MAX_TOTAL"));
    m_foregroundLimits = {int(settings.integer(u"JOB_FOREGROUND_MAX_PER_SESSION")),
                          int(settings.integer(u"JOB_FOREGROUND_MAX_PER_PRINCIPAL"))};
    limits.keepDetachedSeconds = int(settings.integer(u"JOB_KEEP_SECONDS"));
    jobs.registry = new JobRegistry(limits, &server);
    jobs.registry->useProfiles(&server.profiles());
    jobs.handles = new OutputHandleStore(int(settings.integer(u"OUTPUT_HANDLE_SECONDS")), &server);
    QObject::connect(&server, &McpServer::sessionClosed, jobs.registry,
                     [registry = jobs.registry, handles = jobs.handles](const QString &sessionId) {
                         registry->endSession(sessionId);
                         handles->endSession(sessionId);
                     });
    // A workspace being deleted takes its jobs with it.
    QObject::connect(m_workspaces, &SessionWorkspaces::workspaceRemoving, this,
                     [this](const QString &path) {
                         if (const int killed = m_supervisor.cancelJobsIn(path))
                             spdlog::info("workspaces: killed {} job(s) of the deleted {}", killed,
                                          path.toStdString());
                     });
    // A restored workspace is another tree: pre-started jobs still stand in the old one.
    QObject::connect(m_workspaces, &SessionWorkspaces::workspaceReplaced, this, [this] {
        for (const auto &[kind, kept] : m_kept)
            startKept(kind);
    });
    spdlog::info("jobs: call jobs at most {} per session, {} per principal; background jobs at "
                 "most {} per session, {} per principal, {} in total, {} s each; workspaces {}",
                 m_foregroundLimits.perSession, m_foregroundLimits.perPrincipal, limits.perSession,
                 limits.perPrincipal, limits.total, jobs.timeoutMaxSeconds,
                 m_workspaces->mode() == SessionWorkspaces::Mode::Shared ? "shared"
                                                                         : "per session");
}

void JobRunner::keepWarm(const QString &kind, const JobRequest &awaiting,
                         const JobRequest &forTemplate, int size, bool jobsCanStart)
{
    m_kept[kind] = {awaiting, forTemplate, size, jobsCanStart};
    startKept(kind);
}

// The template, or else the warm jobs, of `kind`, new.
void JobRunner::startKept(const QString &kind)
{
    const Kept &kept = m_kept.at(kind);
    const bool shared = m_workspaces->mode() == SessionWorkspaces::Mode::Shared;
    m_warm.erase(kind);
    // A job whose network goes through the egress gate listens in a namespace of its own, which
    // a template's calls could not have: such policies always start cold.
    const auto &namespaces = kept.awaiting.policy.namespaces;
    const bool ownNetwork = namespaces && namespaces->egressPort;
    if (m_templatesWanted && kept.jobsCanStart && shared && !ownNetwork) {
        keepTemplate(kind, kept.forTemplate, kept.size);
        return;
    }
    retireTemplate(kind);
    if (kept.size > 0 && kept.jobsCanStart && shared)
        m_warm[kind] = std::make_unique<WarmJobPool>(m_supervisor, kept.awaiting, kept.size);
}

// A new template for `kind`; the one before (another policy, another workspace) is retired.
// Each has a socket of its own name, so that nothing reaches a retired one.
void JobRunner::keepTemplate(const QString &kind, const JobRequest &forTemplate, int spareCells)
{
    retireTemplate(kind);
    const QString socket =
            QStringLiteral("%1/%2-%3.sock").arg(m_templateDirectory, kind).arg(++m_templatesMade);
    if (QFile::encodeName(socket).size() >= qsizetype(sizeof(sockaddr_un::sun_path))) {
        spdlog::warn("sandbox: no {} template: its socket {} is too long; calls start cold",
                     kind.toStdString(), socket.toStdString());
        return;
    }
    // Made or checked through a descriptor: a link planted at its name is refused, never given
    // mode 0700 in place of what it names.
    if (QString why; !openOwnDirectory(m_templateDirectory, 0700, &why).isValid()) {
        spdlog::warn("sandbox: no {} template: {}; calls start cold", kind.toStdString(),
                     why.toStdString());
        return;
    }
    m_templates[kind] = new CallTemplate(m_supervisor, forTemplate, socket, spareCells, this);
}

void JobRunner::retireTemplate(const QString &kind)
{
    const auto found = m_templates.find(kind);
    if (found == m_templates.end())
        return;
    found->second->retire();
    m_templates.erase(found);
}

QJsonObject JobRunner::templatesStatus() const
{
    QJsonObject status{{QStringLiteral("enabled"), m_templatesWanted}};
    for (const auto &[kind, callTemplate] : m_templates)
        status.insert(kind, callTemplate->status());
    return status;
}

int JobRunner::backgroundTimeoutSeconds(std::optional<qint64> asked) const
{
    return int(qMin<qint64>(asked.value_or(m_services.timeoutMaxSeconds),
                            m_services.timeoutMaxSeconds));
}

// The job runs in the workspace the call works in (SessionWorkspaces::forCall): the session's
// own in per-session mode, or a named one; the jail mounts that directory (and only it) instead
// of the shared one, and the job holds it, so that it is not removed while the job runs (a job
// taken over by job_attach outlives its session). A job in the shared one is counted too, so
// that a checkpoint's restore does not pull the tree from under it.
bool JobRunner::placeInWorkspace(const ToolCall &call, JobRequest &request, QString *error)
{
    const std::optional<Workspace> place = m_workspaces->forCall(call, error);
    if (!place)
        return false;
    const std::string shared = request.policy.workspace;
    request.policy.workspace = place->path().toStdString();
    request.workspaceHold = m_workspaces->holdForJob(*place);
    // Without the namespaces layer jobs see the host path, in HOME too.
    if (const std::string *home = request.policy.envValue("HOME"); home && *home == shared)
        request.policy.setEnv("HOME", request.policy.workspace);
    return true;
}

QString JobRunner::foregroundRefusal(const ToolCall &call) const
{
    const int ofSession = m_foregroundBySession.value(call.sessionId());
    if (ofSession >= m_foregroundLimits.perSession)
        return QStringLiteral("this session already runs %1 calls' jobs at once, the most "
                              "allowed (JOB_FOREGROUND_MAX_PER_SESSION); wait for one to finish")
                .arg(ofSession);
    const int ofPrincipal = m_foregroundByPrincipal.value(call.principal().name());
    if (const std::shared_ptr<const Profile> profile =
                m_server.profiles().profileOf(call.principal().name());
        profile && profile->maxForegroundJobs) {
        if (ofPrincipal < *profile->maxForegroundJobs)
            return {};
        return QStringLiteral("principal '%1' already runs %2 calls' jobs at once over all its "
                              "sessions, the most its profile '%3' allows "
                              "(max_foreground_jobs); wait for one to finish")
                .arg(call.principal().name())
                .arg(ofPrincipal)
                .arg(profile->name);
    }
    if (ofPrincipal >= m_foregroundLimits.perPrincipal)
        return QStringLiteral("principal '%1' already runs %2 calls' jobs at once over all its "
                              "sessions, the most allowed (JOB_FOREGROUND_MAX_PER_PRINCIPAL); "
                              "wait for one to finish")
                .arg(call.principal().name())
                .arg(ofPrincipal);
    return {};
}

// Counts the job against its session and principal until it is deleted (once it has finished).
void JobRunner::countForeground(const ToolCall &call, Job *job)
{
    const QString session = call.sessionId();
    const QString principal = call.principal().name();
    ++m_foregroundBySession[session];
    ++m_foregroundByPrincipal[principal];
    connect(job, &QObject::destroyed, this, [this, session, principal] {
        const auto release = [](QHash<QString, int> &counts, const QString &key) {
            if (--counts[key] <= 0)
                counts.remove(key);
        };
        release(m_foregroundBySession, session);
        release(m_foregroundByPrincipal, principal);
    });
}

void JobRunner::runInForeground(const std::shared_ptr<ToolCall> &call, JobRequest request,
                                const QString &kind, ResultMaker makeResult)
{
    if (const QString refusal = foregroundRefusal(*call); !refusal.isEmpty()) {
        call->finish(ToolResult::structuredFailure(refusal));
        return;
    }
    request.principal = call->principal().name();
    QString error;
    const std::string sharedWorkspace = request.policy.workspace;
    if (!placeInWorkspace(*call, request, &error)) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    // A template's cells and a pre-started job run in the shared workspace's root: calls
    // elsewhere (a working_dir, another workspace) start their own. A fork of the template
    // first, else a pre-started job, else a jail of the call's own.
    const bool inRoot = request.policy.cwd.empty() && request.policy.workspace == sharedWorkspace;
    if (inRoot && runForked(call, request, kind, makeResult))
        return;
    const auto warm = inRoot ? m_warm.find(kind) : m_warm.end();
    if (warm != m_warm.end()) {
        if (JailJob *job = warm->second->take()) {
            job->passUidTo(request.principal);
            countForeground(*call, job);
            job->setWorkspaceHold(std::move(request.workspaceHold));
            ForegroundJob::adopt(call, job, std::move(makeResult), request.standardInput,
                                 request.timeoutMs);
            return;
        }
    }
    JailJob *job = m_supervisor.createJob(request, nullptr, &error);
    if (!job) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    countForeground(*call, job);
    ForegroundJob::start(call, job, std::move(makeResult));
}

bool JobRunner::runForked(const std::shared_ptr<ToolCall> &call, const JobRequest &request,
                          const QString &kind, ResultMaker &makeResult)
{
    const auto found = m_templates.find(kind);
    if (found == m_templates.end())
        return false;
    CallTemplate &callTemplate = *found->second;
    TemplateCell *cell = callTemplate.takeCell(request.principal);
    if (!cell)
        return false;
    ForkedJob *job = m_supervisor.createForkedJob(request, cell, cell->takeLease(), nullptr);
    callTemplate.adopt(job, cell);
    countForeground(*call, job);
    ForegroundJob::start(call, job, std::move(makeResult));
    return true;
}

void JobRunner::runInBackground(const std::shared_ptr<ToolCall> &call, JobRequest request,
                                BackgroundJob::Description description, std::optional<int> yieldMs,
                                ResultMaker makeResult)
{
    request.principal = call->principal().name();
    QString error;
    if (!placeInWorkspace(*call, request, &error)) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    BackgroundStart start;
    start.request = std::move(request);
    start.request.timeoutMs = description.timeoutSeconds * 1000;
    start.description = std::move(description);
    start.makeResult = std::move(makeResult);
    start.yieldMs = yieldMs;
    startBackgroundJob(m_services, call, std::move(start));
}

} // namespace cmcp
