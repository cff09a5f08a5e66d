#include "SystemTools.h"

#include "ToolBuilding.h"

#include "BashManager.h"
#include "JobCallBridge.h"
#include "JobRegistry.h"
#include "JobServices.h"
#include "JobStarter.h"
#include "JobTools.h"
#include "OutputHandleStore.h"
#include "JobPolicy.h"
#include "LiveSettings.h"
#include "LiveSnapshot.h"
#include "McpServer.h"
#include "PythonManager.h"
#include "SandboxSupervisor.h"
#include "SessionWorkspaces.h"
#include "Settings.h"
#include "SystemToolSchemas.h"
#include "ToolCall.h"
#include "WarmJobPool.h"
#include "Workspace.h"

#include <QJsonArray>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

// Everything the three tools share, alive as long as any handler is.
struct SystemTools
{
    SystemTools(const SandboxCapabilities &capabilities, const Workspace &workspace,
                SandboxOptions options)
        : policy(capabilities, workspace.path()),
          supervisor(std::move(options))
    {
    }
    JobPolicy policy;
    SandboxSupervisor supervisor;
    // The BASH_* and PYTHON_* policies; a call takes one snapshot at its start (LiveSettings).
    LiveSnapshot<BashManager> bash;
    LiveSnapshot<PythonManager> python;
    // Jobs started ahead of their calls (BASH_WARM_JOBS, PYTHON_WARM_JOBS); null when none.
    // Their jails were built from the policy of their time: a new policy replaces them.
    std::unique_ptr<WarmJobPool> warmCommand;
    std::unique_ptr<WarmJobPool> warmPython;
    bool warmJobsPossible = false;
    // Background jobs and output handles; set by registerSystemTools.
    JobServices jobs;
    SessionWorkspaces *workspaces = nullptr;
};

std::shared_ptr<SystemTools>
createSystemTools(const Settings &settings, const SandboxCapabilities &capabilities, QString *error)
{
    const Workspace workspace = Workspace::fromSettings(settings);
    SandboxOptions options = SandboxOptions::fromSettings(settings);
    options.spillDirectory = JobServices::fileDirectoryFromSettings(settings);
    auto tools = std::make_shared<SystemTools>(capabilities, workspace, std::move(options));
    std::shared_ptr<const BashManager> bash =
            BashManager::fromConfig(settings, tools->policy, error);
    if (!bash)
        return nullptr;
    std::shared_ptr<const PythonManager> python =
            PythonManager::fromConfig(settings, tools->policy, error);
    if (!python)
        return nullptr;
    tools->bash.replace(std::move(bash));
    tools->python.replace(std::move(python));
    return tools;
}

// Interactive code travels as an argument, within the kernel's 128 KiB per argument.
constexpr qsizetype kInteractiveCodeMaxBytes = 100 * 1024;

ToolResult failure(const QString &message)
{
    return ToolResult::structured(
            QJsonObject{{QLatin1String("success"), false}, {QLatin1String("error"), message}},
            true);
}

std::optional<qint64> timeoutArgument(const QJsonObject &arguments)
{
    const QJsonValue value = arguments.value(QLatin1String("timeout"));
    return value.isDouble() ? std::optional<qint64>(qint64(value.toDouble())) : std::nullopt;
}

// How a call asked its job to run: returning at once, after yield_ms, or as usual.
struct BackgroundMode
{
    bool background = false;
    bool interactive = false;
    std::optional<int> yieldMs;
    bool any() const { return background || interactive || yieldMs; }
};

BackgroundMode backgroundMode(const QJsonObject &arguments)
{
    BackgroundMode mode;
    mode.interactive = arguments.value(QLatin1String("interactive")).toBool(false);
    // An interactive job waits for input the call cannot give: it always runs in the background.
    mode.background = arguments.value(QLatin1String("background")).toBool(false) || mode.interactive;
    if (const QJsonValue yield = arguments.value(QLatin1String("yield_ms"));
        yield.isDouble() && !mode.background)
        mode.yieldMs = int(qBound<double>(0, yield.toDouble(), 600000));
    return mode;
}

// A background job's limit: its own setting, which the call's timeout may only lower.
int backgroundTimeoutSeconds(const SystemTools &tools, const QJsonObject &arguments)
{
    const std::optional<qint64> asked = timeoutArgument(arguments);
    return int(qMin<qint64>(asked.value_or(tools.jobs.timeoutMaxSeconds),
                            tools.jobs.timeoutMaxSeconds));
}

// In per-session mode the job's workspace is the session's: the jail mounts that directory
// (and only it) instead of the shared one, and the job holds it, so that it is not removed
// while the job runs (a job taken over by job_attach outlives its session).
bool placeInSessionWorkspace(SystemTools &tools, const QString &sessionId, JobRequest &request,
                             QString *error)
{
    if (tools.workspaces->mode() == SessionWorkspaces::Mode::Shared)
        return true;
    const std::optional<Workspace> own = tools.workspaces->forSession(sessionId, error);
    if (!own)
        return false;
    const QString shared = request.policy.workspace;
    request.policy.workspace = own->path();
    request.workspaceHold = tools.workspaces->holdForJob(*own);
    // Without the namespaces layer jobs see the host path, in HOME too.
    if (request.policy.envValue(QStringLiteral("HOME")) == shared)
        request.policy.setEnv(QStringLiteral("HOME"), own->path());
    return true;
}

// Output cut to fit gets a handle to its complete copy (the spill file), which output_read
// serves to this session for OUTPUT_HANDLE_SECONDS.
void addOutputHandles(QJsonObject &value, const JobResult &result, OutputHandleStore *handles,
                      const QString &sessionId)
{
    QStringList notes;
    const auto add = [&](const CapturedStream &stream, const char *field, const char *name) {
        if (!stream.truncated)
            return;
        if (stream.spillPath.isEmpty()) {
            notes.append(QStringLiteral("%1 was cut to fit and its complete copy could not be "
                                        "kept (%2)")
                                 .arg(QLatin1String(name), stream.spillError));
            return;
        }
        const QString handle = handles->add(sessionId, stream.spillPath, stream.totalBytes);
        value.insert(QLatin1String(field), handle);
        notes.append(QStringLiteral("%1 was cut to fit (%2 bytes in all): read all of it with "
                                    "output_read(\"%3\", offset)")
                             .arg(QLatin1String(name))
                             .arg(stream.totalBytes)
                             .arg(handle));
    };
    add(result.standardOutput, "stdout_handle", "stdout");
    add(result.standardError, "stderr_handle", "stderr");
    if (!notes.isEmpty())
        value.insert(QLatin1String("truncation_note"), notes.join(QStringLiteral("; ")));
}

// A job the jail refused to start, or the supervisor could not run: why, in the tool's words.
std::optional<QString> notRun(const JobResult &result)
{
    if (result.refusal) {
        // cmcp-jail's line is "cmcp-jail: <layer>: <what failed>"; the layer is named below.
        QString message = result.refusal->message;
        const QString prefix = QStringLiteral("cmcp-jail: %1: ").arg(result.refusal->layer);
        if (message.startsWith(prefix))
            message = message.mid(prefix.size());
        // The working directory is checked beneath the workspace by the jail (openat2).
        if (message.startsWith(QLatin1String("cwd ")))
            return QStringLiteral("working_dir %1").arg(message.mid(4));
        return QStringLiteral("the sandbox refused to start the job (%1): %2")
                .arg(result.refusal->layer, message);
    }
    if (!result.exitCode && !result.signal && !result.error.isEmpty())
        return result.error;
    return std::nullopt;
}

// The accounting record, with exit_code always a number and a message for abnormal endings.
QJsonObject accounting(const JobResult &result, int timeoutSeconds, const QString &what)
{
    QJsonObject json = result.toJson();
    for (const char *key : {"stdout", "stderr", "stdout_spill", "stderr_spill"})
        json.remove(QLatin1String(key));
    const int exitCode = result.exitCode ? *result.exitCode : 128 + result.signal.value_or(0);
    json.insert(QLatin1String("exit_code"), exitCode);
    json.insert(QLatin1String("timeout_seconds"), timeoutSeconds);
    QString message;
    if (result.timedOut)
        message = QStringLiteral("%1 was killed after its time limit of %2 s; the output up to "
                                 "then is kept")
                          .arg(what)
                          .arg(timeoutSeconds);
    else if (result.cancelled)
        message = QStringLiteral("%1 was cancelled").arg(what);
    else if (result.oomKilled)
        message = QStringLiteral("%1 was killed: it reached its memory limit").arg(what);
    else if (result.signal)
        message = QStringLiteral("%1 was killed by signal %2").arg(what).arg(*result.signal);
    if (!message.isEmpty())
        json.insert(QLatin1String("message"), message);
    return json;
}

void runJob(SystemTools &tools, const std::shared_ptr<ToolCall> &call, const PreparedJob &prepared,
            JobCallBridge::ResultMaker makeResult)
{
    if (!prepared.request) {
        call->finish(failure(prepared.refusal));
        return;
    }
    QString error;
    JailJob *job = tools.supervisor.createJob(*prepared.request, nullptr, &error);
    if (!job) {
        call->finish(failure(error));
        return;
    }
    JobCallBridge::start(call, job, std::move(makeResult));
}

// A pre-started job runs in the workspace's root: calls elsewhere start their own.
void runPreparedJob(SystemTools &tools, const std::shared_ptr<ToolCall> &call,
                    PreparedJob prepared, WarmJobPool *warm, JobCallBridge::ResultMaker makeResult)
{
    QString error;
    if (prepared.request
        && !placeInSessionWorkspace(tools, call->sessionId(), *prepared.request, &error)) {
        call->finish(failure(error));
        return;
    }
    // Pre-started jobs have the shared workspace.
    const bool inRoot = prepared.request && prepared.request->policy.cwd.isEmpty()
            && tools.workspaces->mode() == SessionWorkspaces::Mode::Shared;
    if (inRoot && warm) {
        if (JailJob *job = warm->take()) {
            JobCallBridge::adopt(call, job, std::move(makeResult), prepared.request->standardInput,
                                 prepared.request->timeoutMs);
            return;
        }
    }
    runJob(tools, call, prepared, std::move(makeResult));
}

// The first line of a command or of code, shortened, for job_list.
QString summaryOf(const QString &text)
{
    const QString line = text.trimmed().section(QLatin1Char('\n'), 0, 0);
    return line.size() > 120 ? line.left(117) + QStringLiteral("...") : line;
}

void runInBackground(SystemTools &tools, const std::shared_ptr<ToolCall> &call,
                     const PreparedJob &prepared, const BackgroundMode &mode,
                     const QString &summary, BackgroundJob::ResultMaker makeResult)
{
    if (!prepared.request) {
        call->finish(failure(prepared.refusal));
        return;
    }
    BackgroundStart start;
    start.request = *prepared.request;
    QString error;
    if (!placeInSessionWorkspace(tools, call->sessionId(), start.request, &error)) {
        call->finish(failure(error));
        return;
    }
    start.description.tool = call->toolName();
    start.description.summary = summary;
    start.description.interactive = mode.interactive;
    start.description.timeoutSeconds = backgroundTimeoutSeconds(tools, call->arguments());
    start.request.timeoutMs = start.description.timeoutSeconds * 1000;
    start.makeResult = std::move(makeResult);
    start.yieldMs = mode.yieldMs;
    startBackgroundJob(tools.jobs, call, std::move(start));
}

void runCommand(SystemTools &tools, const std::shared_ptr<ToolCall> &call)
{
    const std::shared_ptr<const BashManager> bash = tools.bash.current();
    const QJsonObject arguments = call->arguments();
    CommandRequest request;
    request.command = arguments.value(QLatin1String("command")).toString();
    request.workingDir = arguments.value(QLatin1String("working_dir")).toString();
    request.timeoutSeconds = timeoutArgument(arguments);
    const BackgroundMode mode = backgroundMode(arguments);
    PreparedJob prepared = bash->prepare(request);
    const int timeoutSeconds =
            mode.any() ? backgroundTimeoutSeconds(tools, arguments) : prepared.timeoutSeconds;
    // Handles only for a call's own result: a background job's output is read with job_output.
    OutputHandleStore *handles = mode.any() ? nullptr : tools.jobs.handles;
    auto makeResult = [timeoutSeconds, handles,
                       sessionId = call->sessionId()](const JobResult &result) {
        if (const std::optional<QString> why = notRun(result))
            return failure(*why);
        QJsonObject value = accounting(result, timeoutSeconds, QStringLiteral("the command"));
        value.insert(QLatin1String("stdout"), result.standardOutput.text());
        value.insert(QLatin1String("stderr"), result.standardError.text());
        value.insert(QLatin1String("success"),
                     result.exitCode == 0 && !result.timedOut && !result.cancelled);
        if (handles)
            addOutputHandles(value, result, handles, sessionId);
        return ToolResult::structured(value);
    };
    if (!mode.any()) {
        runPreparedJob(tools, call, prepared, tools.warmCommand.get(), std::move(makeResult));
        return;
    }
    if (prepared.request && mode.interactive)
        prepared.request = BashManager::keepingInputOpen(*prepared.request);
    runInBackground(tools, call, prepared, mode, summaryOf(request.command),
                    std::move(makeResult));
}

void runPython(SystemTools &tools, const std::shared_ptr<ToolCall> &call)
{
    const std::shared_ptr<const PythonManager> python = tools.python.current();
    const QJsonObject arguments = call->arguments();
    PythonRequest request;
    request.code = arguments.value(QLatin1String("code")).toString();
    request.workingDir = arguments.value(QLatin1String("working_dir")).toString();
    request.timeoutSeconds = timeoutArgument(arguments);
    const BackgroundMode mode = backgroundMode(arguments);
    if (mode.interactive && request.code.toUtf8().size() > kInteractiveCodeMaxBytes) {
        call->finish(failure(QStringLiteral("code for an interactive session is at most %1 "
                                            "bytes (it is passed as an argument); send the "
                                            "rest with job_write_stdin")
                                     .arg(kInteractiveCodeMaxBytes)));
        return;
    }
    QByteArray nonce;
    PreparedJob prepared = python->prepare(request, &nonce);
    const int timeoutSeconds =
            mode.any() ? backgroundTimeoutSeconds(tools, arguments) : prepared.timeoutSeconds;
    OutputHandleStore *handles = mode.any() ? nullptr : tools.jobs.handles;
    const bool interactive = mode.interactive;
    auto makeResult = [timeoutSeconds, nonce, handles, interactive,
                       sessionId = call->sessionId()](const JobResult &result) {
        if (const std::optional<QString> why = notRun(result))
            return failure(*why);
        const PythonOutcome outcome = PythonManager::outcome(result, nonce);
        QJsonObject value = accounting(result, timeoutSeconds, QStringLiteral("the code"));
        value.insert(QLatin1String("output"), result.standardOutput.text());
        value.insert(QLatin1String("error"), result.standardError.text());
        value.insert(QLatin1String("result"), outcome.result);
        value.insert(QLatin1String("result_repr"), outcome.resultIsRepr);
        if (!outcome.channelProblem.isEmpty())
            value.insert(QLatin1String("result_error"), outcome.channelProblem);
        // An interactive session has no runner to report: it succeeded when it exited with 0.
        const bool ranWell = interactive
                || (outcome.ranToEnd && !outcome.raised && outcome.exitStatus.value_or(0) == 0);
        value.insert(QLatin1String("success"),
                     ranWell && result.exitCode == 0 && !result.timedOut && !result.cancelled);
        if (handles)
            addOutputHandles(value, result, handles, sessionId);
        return ToolResult::structured(value);
    };
    if (!mode.any()) {
        runPreparedJob(tools, call, prepared, tools.warmPython.get(), std::move(makeResult));
        return;
    }
    if (prepared.request && mode.interactive)
        prepared.request = python->interactiveJob(prepared, request.code);
    runInBackground(tools, call, prepared, mode, summaryOf(request.code), std::move(makeResult));
}

void envVar(SystemTools &tools, const std::shared_ptr<ToolCall> &call)
{
    // The environment sandboxed commands see is built by the daemon, from nothing of its own:
    // no variable of the daemon (a token, an API key) can be in it.
    QJsonObject variables;
    for (const auto &[name, value] : tools.bash.current()->environment())
        variables.insert(name, value);
    QJsonObject value{{QLatin1String("success"), true}, {QLatin1String("variables"), variables}};
    const QJsonValue requested = call->arguments().value(QLatin1String("var_name"));
    if (requested.isString())
        value.insert(QLatin1String("requested_var"),
                     variables.value(requested.toString()).isString()
                             ? variables.value(requested.toString())
                             : QJsonValue(QJsonValue::Null));
    call->finish(ToolResult::structured(value));
}

void logEnforcement(const SystemTools &tools)
{
    const std::shared_ptr<const BashManager> current = tools.bash.current();
    const BashManager &bash = *current;
    if (bash.unrestricted()) {
        spdlog::warn("system_run_command: BASH_ALLOWED_COMMANDS=*: every program beneath /usr "
                     "may run (still jailed)");
    } else if (!tools.policy.hasLayer("landlock") || !tools.policy.hasLayer("namespaces")) {
        spdlog::warn("system_run_command: without the {} layer the kernel does not hold "
                     "BASH_ALLOWED_COMMANDS; only the daemon's pre-check does",
                     tools.policy.hasLayer("landlock") ? "namespaces" : "landlock");
    } else {
        spdlog::info("system_run_command: the kernel lets commands execute bash and only: {}",
                     bash.options().allowedCommands.join(QLatin1Char(',')).toStdString());
    }
    spdlog::info("system tools: jobs run with layers {}",
                 tools.policy.layers(false).join(QLatin1Char(',')).toStdString());
}

// The background-job registry, the output handles and the workspaces of the sessions, and what
// a session's end does to them: its jobs are killed and its handles deleted (SessionWorkspaces
// removes its workspace).
void setUpJobServices(McpServer &server, const Settings &settings, SystemTools &tools)
{
    JobServices &jobs = tools.jobs;
    jobs.supervisor = &tools.supervisor;
    jobs.fileDirectory = tools.supervisor.options().spillDirectory;
    // Without it the tools still work: a truncated output says its copy could not be kept and
    // a background job cannot start, each with the reason.
    if (QString why; !JobServices::prepareFileDirectory(jobs.fileDirectory, &why))
        spdlog::warn("jobs: {}: no output handles, no background jobs", why.toStdString());
    jobs.outputLogCapBytes = settings.integer(u"JOB_OUTPUT_MAX_MB") * 1024 * 1024;
    jobs.timeoutMaxSeconds = int(settings.integer(u"JOB_TIMEOUT_MAX"));
    JobRegistry::Limits limits;
    limits.perSession = int(settings.integer(u"JOB_MAX_PER_SESSION"));
    limits.total = int(settings.integer(u"JOB_MAX_TOTAL"));
    limits.keepDetachedSeconds = int(settings.integer(u"JOB_KEEP_SECONDS"));
    jobs.registry = new JobRegistry(limits, &server);
    jobs.handles = new OutputHandleStore(int(settings.integer(u"OUTPUT_HANDLE_SECONDS")), &server);
    tools.workspaces = &SessionWorkspaces::of(server, settings);
    QObject::connect(&server, &McpServer::sessionClosed, jobs.registry,
                     [registry = jobs.registry, handles = jobs.handles](const QString &sessionId) {
                         registry->endSession(sessionId);
                         handles->endSession(sessionId);
                     });
    spdlog::info("jobs: background jobs at most {} per session, {} in total, {} s each; "
                 "workspaces {}",
                 limits.perSession, limits.total, jobs.timeoutMaxSeconds,
                 tools.workspaces->mode() == SessionWorkspaces::Mode::Shared
                         ? "shared"
                         : "per session");
    registerJobTools(server, jobs);
}

// Jobs started ahead for `manager`'s policy (BashManager or PythonManager), or none.
template<typename Manager>
std::unique_ptr<WarmJobPool> warmPool(SystemTools &tools, const Manager &manager)
{
    const int size = manager.options().warmJobs;
    if (size <= 0 || !tools.warmJobsPossible)
        return nullptr;
    return std::make_unique<WarmJobPool>(tools.supervisor, manager.jobAwaitingInput(), size);
}

// A new policy for one kind of job: calls from now on take it; jobs waiting with the old jail
// (its allowed programs, its memory limit) are ended, and fresh ones started. A call already
// running keeps its job, and the snapshot its result maker holds.
template<typename Manager>
LiveSettings::Install
installer(const std::shared_ptr<SystemTools> &tools, LiveSnapshot<Manager> SystemTools::*snapshot,
          std::unique_ptr<WarmJobPool> SystemTools::*warm, std::shared_ptr<const Manager> next)
{
    return [tools, snapshot, warm, next] {
        const bool sameJail = ((*tools).*snapshot).current()->jobAwaitingInput().policy
                == next->jobAwaitingInput().policy;
        ((*tools).*snapshot).replace(next);
        if (!sameJail)
            (*tools).*warm = warmPool(*tools, *next);
    };
}

void registerLiveSystemSettings(LiveSettings &live, const std::shared_ptr<SystemTools> &tools)
{
    // Building a manager resolves every allowed program again: a name that is not a program
    // refuses the change, as it would stop start-up.
    live.add({QStringLiteral("BASH_ALLOWED_COMMANDS"), QStringLiteral("BASH_TIMEOUT_DEFAULT"),
              QStringLiteral("BASH_TIMEOUT_MAX")},
             [tools](const Settings &changed, QString *error) -> LiveSettings::Install {
                 std::shared_ptr<const BashManager> next =
                         BashManager::fromConfig(changed, tools->policy, error);
                 if (!next)
                     return {};
                 return installer(tools, &SystemTools::bash, &SystemTools::warmCommand,
                                  std::move(next));
             });
    live.add({QStringLiteral("PYTHON_MEMORY_LIMIT"), QStringLiteral("PYTHON_TIMEOUT_DEFAULT"),
              QStringLiteral("PYTHON_TIMEOUT_MAX")},
             [tools](const Settings &changed, QString *error) -> LiveSettings::Install {
                 std::shared_ptr<const PythonManager> next =
                         PythonManager::fromConfig(changed, tools->policy, error);
                 if (!next)
                     return {};
                 return installer(tools, &SystemTools::python, &SystemTools::warmPython,
                                  std::move(next));
             });
    // Read on the event loop only, once per call as it starts its background job.
    live.add({QStringLiteral("JOB_TIMEOUT_MAX")},
             [tools](const Settings &changed, QString *) -> LiveSettings::Install {
                 return [tools, seconds = int(changed.integer(u"JOB_TIMEOUT_MAX"))] {
                     tools->jobs.timeoutMaxSeconds = seconds;
                 };
             });
}

} // namespace

bool registerSystemTools(McpServer &server, const Settings &settings,
                         const SandboxCapabilities &capabilities, QString *error,
                         LiveSettings *live)
{
    const std::shared_ptr<SystemTools> tools = createSystemTools(settings, capabilities, error);
    if (!tools)
        return false;
    logEnforcement(*tools);
    setUpJobServices(server, settings, *tools);
    // Without the identity layer (a daemon that is neither root nor able to make user
    // namespaces) no job can start: none is kept waiting either; nor in per-session workspaces,
    // which a job started ahead cannot know.
    tools->warmJobsPossible = tools->policy.hasLayer("identity")
            && tools->workspaces->mode() == SessionWorkspaces::Mode::Shared;
    tools->warmCommand = warmPool(*tools, *tools->bash.current());
    tools->warmPython = warmPool(*tools, *tools->python.current());
    if (live)
        registerLiveSystemSettings(*live, tools);
    ToolRegistry &registry = server.tools();
    // Annotations: {readOnly, destructive, idempotent, openWorld}.
    registry.add(tools::makeTool(
            "system_run_command", "Run a shell command",
            "Runs a bash command in a sandbox, in the workspace shared with the file tools. "
            "Only the programs listed in BASH_ALLOWED_COMMANDS can run; the network is off. "
            "Returns stdout, stderr, exit_code and success, with the job's accounting.",
            systemschemas::commandInput(), systemschemas::commandOutput(),
            {false, true, false, false},
            [tools](const std::shared_ptr<ToolCall> &call) { runCommand(*tools, call); }));
    registry.add(tools::makeTool(
            "system_run_python", "Run Python code",
            "Runs Python 3 code (standard library only) in a sandbox, in the workspace shared "
            "with the file tools, with a memory limit (PYTHON_MEMORY_LIMIT) and no network. Set "
            "the variable _ to return a value as result. Returns output, error, result and "
            "success, with the job's accounting.",
            systemschemas::pythonInput(), systemschemas::pythonOutput(),
            {false, true, false, false},
            [tools](const std::shared_ptr<ToolCall> &call) { runPython(*tools, call); }));
    registry.add(tools::makeTool(
            "system_env_var", "Sandbox environment variables",
            "Returns the environment variables sandboxed commands and code see, and the value "
            "of var_name as requested_var (null when it is not set there).",
            systemschemas::envInput(), systemschemas::envOutput(), {true, false, true, false},
            [tools](const std::shared_ptr<ToolCall> &call) { envVar(*tools, call); }));
    return true;
}

std::optional<QJsonObject>
systemJobPolicies(const Settings &settings, const SandboxCapabilities &capabilities, QString *error)
{
    const std::shared_ptr<SystemTools> tools = createSystemTools(settings, capabilities, error);
    if (!tools)
        return std::nullopt;
    const PreparedJob command =
            tools->bash.current()->prepare({QStringLiteral("true"), {}, {}}, false);
    QByteArray nonce;
    const PreparedJob python = tools->python.current()->prepare({QString(), {}, {}}, &nonce);
    return QJsonObject{{QStringLiteral("command"),
                        QJsonObject{{QStringLiteral("program"), command.request->program},
                                    {QStringLiteral("arguments"),
                                     QJsonArray::fromStringList(command.request->arguments)},
                                    {QStringLiteral("policy"), command.request->policy.toJson()}}},
                       {QStringLiteral("python"),
                        QJsonObject{{QStringLiteral("program"), python.request->program},
                                    {QStringLiteral("policy"), python.request->policy.toJson()}}}};
}

} // namespace cmcp
