#include "tools/system/SystemTools.h"

#include "tools/common/ToolArguments.h"
#include "tools/common/ToolBuilding.h"

#include "managers/BashManager.h"
#include "sandbox/JobPolicy.h"
#include "jobs/JobRunner.h"
#include "base/LiveSettings.h"
#include "base/LiveSnapshot.h"
#include "mcp/McpServer.h"
#include "managers/PythonManager.h"
#include "common/Settings.h"
#include "tools/system/JobNetworkGate.h"
#include "tools/system/SystemToolResults.h"
#include "tools/system/SystemToolSchemas.h"
#include "mcp/ToolCall.h"
#include "workspace/Workspace.h"

#include <algorithm>
#include <QJsonArray>
#include <QPointer>

#include <spdlog/spdlog.h>

namespace cmcp {

using namespace systemresults;

namespace {

// Everything the three tools share, alive as long as any handler is.
struct SystemTools
{
    SystemTools(const SandboxCapabilities &capabilities, const Workspace &workspace)
        : policy(capabilities, workspace.path())
    {
    }
    JobPolicy policy;
    // The BASH_* and PYTHON_* policies; a call takes one snapshot at its start (LiveSettings).
    LiveSnapshot<BashManager> bash;
    LiveSnapshot<PythonManager> python;
    // Runs the jobs; null for systemJobPolicies, which runs none.
    QPointer<JobRunner> runner;
};

std::shared_ptr<SystemTools>
createSystemTools(const Settings &settings, const SandboxCapabilities &capabilities, QString *error)
{
    auto tools = std::make_shared<SystemTools>(capabilities, Workspace::fromSettings(settings));
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

// The two kinds of job, also the names of their warm jobs (JobRunner::keepWarm).
const QString kCommandKind = QStringLiteral("command");
const QString kPythonKind = QStringLiteral("python");

// Interactive code travels as an argument, within the kernel's 128 KiB per argument.
constexpr qsizetype kInteractiveCodeMaxBytes = 100 * 1024;

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
    mode.interactive = tools::boolArgument(arguments, "interactive");
    // An interactive job waits for input the call cannot give: it always runs in the background.
    mode.background = tools::boolArgument(arguments, "background") || mode.interactive;
    if (const std::optional<qint64> yield = tools::integerArgument(arguments, "yield_ms");
        yield && !mode.background)
        mode.yieldMs = int(std::clamp<qint64>(*yield, 0, 600000));
    return mode;
}

// The first line of a command or of code, shortened, for job_list.
QString summaryOf(const QString &text)
{
    const QString line = text.trimmed().section(QLatin1Char('\n'), 0, 0);
    return line.size() > 120 ? line.left(117) + QStringLiteral("...") : line;
}

// What one kind of job makes of a call: its job (or why there is none), and what the tool's
// result holds beyond the accounting.
struct KindCall
{
    QString kind;
    PreparedJob prepared = {};
    QString text; // the command or the code
    QString what; // the job in the result's messages
    // Adds the kind's output fields and "success" to the result of a job that ran.
    std::function<void(QJsonObject &, const JobResult &)> fields = {};
    // The job reading its standard input for as long as it runs (interactive: true).
    std::function<JobRequest(const PreparedJob &)> interactive = {};
};

KindCall commandCall(const SystemTools &tools, const QJsonObject &arguments, const BackgroundMode &)
{
    const std::shared_ptr<const BashManager> bash = tools.bash.current();
    CommandRequest request;
    request.command = tools::stringArgument(arguments, "command");
    request.workingDir = tools::stringArgument(arguments, "working_dir");
    request.timeoutSeconds = tools::integerArgument(arguments, "timeout");
    KindCall call{.kind = kCommandKind,
                  .prepared = bash->prepare(request),
                  .text = request.command,
                  .what = QStringLiteral("the command")};
    call.fields = [](QJsonObject &value, const JobResult &result) {
        value.insert(QLatin1String("stdout"), result.standardOutput.text());
        value.insert(QLatin1String("stderr"), result.standardError.text());
        value.insert(QLatin1String("success"),
                     result.exitCode == 0 && !result.timedOut && !result.cancelled);
    };
    call.interactive = [](const PreparedJob &prepared) {
        return BashManager::keepingInputOpen(*prepared.request);
    };
    return call;
}

KindCall pythonCall(const SystemTools &tools, const QJsonObject &arguments,
                    const BackgroundMode &mode)
{
    const std::shared_ptr<const PythonManager> python = tools.python.current();
    PythonRequest request;
    request.code = tools::stringArgument(arguments, "code");
    request.workingDir = tools::stringArgument(arguments, "working_dir");
    request.timeoutSeconds = tools::integerArgument(arguments, "timeout");
    KindCall call{.kind = kPythonKind, .text = request.code, .what = QStringLiteral("the code")};
    if (mode.interactive && request.code.toUtf8().size() > kInteractiveCodeMaxBytes) {
        call.prepared.refusal = QStringLiteral("code for an interactive session is at most %1 "
                                               "bytes (it is passed as an argument); send the "
                                               "rest with job_write_stdin")
                                        .arg(kInteractiveCodeMaxBytes);
        return call;
    }
    QByteArray nonce;
    call.prepared = python->prepare(request, &nonce);
    call.fields = [nonce, interactive = mode.interactive](QJsonObject &value,
                                                          const JobResult &result) {
        const PythonOutcome outcome = PythonManager::outcome(result, nonce);
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
    };
    call.interactive = [python, code = request.code](const PreparedJob &prepared) {
        return python->interactiveJob(prepared, code);
    };
    return call;
}

// system_run_command and system_run_python: the call's job, run as the call asked.
void runJob(SystemTools &tools, const std::shared_ptr<ToolCall> &call,
            KindCall (*kindCall)(const SystemTools &, const QJsonObject &, const BackgroundMode &))
{
    const QJsonObject arguments = call->arguments();
    const BackgroundMode mode = backgroundMode(arguments);
    KindCall job = kindCall(tools, arguments, mode);
    if (!job.prepared.request) {
        call->finish(ToolResult::structuredFailure(job.prepared.refusal));
        return;
    }
    JobRunner &runner = *tools.runner;
    const int timeoutSeconds = mode.any()
            ? runner.backgroundTimeoutSeconds(tools::integerArgument(arguments, "timeout"))
            : job.prepared.timeoutSeconds;
    // Handles only for a call's own result: a background job's output is read with job_output.
    OutputHandleStore *handles = mode.any() ? nullptr : runner.services().handles;
    auto makeResult = [timeoutSeconds, handles, what = job.what, fields = job.fields,
                       sessionId = call->sessionId()](const JobResult &result) {
        if (const std::optional<QString> why = notRun(result))
            return ToolResult::structuredFailure(*why);
        QJsonObject value = accounting(result, timeoutSeconds, what);
        fields(value, result);
        if (handles)
            addOutputHandles(value, result, handles, sessionId);
        return ToolResult::structured(value);
    };
    if (!mode.any()) {
        runner.runInForeground(call, *job.prepared.request, job.kind, std::move(makeResult));
        return;
    }
    BackgroundJob::Description description;
    description.tool = call->toolName();
    description.summary = summaryOf(job.text);
    description.interactive = mode.interactive;
    description.timeoutSeconds = timeoutSeconds;
    runner.runInBackground(call,
                           mode.interactive ? job.interactive(job.prepared) : *job.prepared.request,
                           std::move(description), mode.yieldMs, std::move(makeResult));
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
    const auto network = [&tools](const char *setting, JobNetwork mode) {
        if (mode == JobNetwork::HostUnsafe)
            spdlog::warn("{}=host-network-unsafe: jobs share the host's network, loopback and "
                         "this daemon's ports included",
                         setting);
        else if (mode == JobNetwork::Gate && !tools.policy.hasLayer("namespaces"))
            spdlog::warn("{}=true, but without the namespaces layer jobs get no network of "
                         "their own to go through the egress gate from: they have none",
                         setting);
        else if (mode == JobNetwork::Gate)
            spdlog::info("{}=true: jobs reach JOB_NETWORK_ALLOWED_DOMAINS through the egress "
                         "gate only (HTTP_PROXY=http://127.0.0.1:{})",
                         setting, JobPolicy::kEgressPort);
    };
    network("BASH_NETWORK", bash.options().network);
    network("PYTHON_NETWORK", tools.python.current()->options().network);
}

// A new policy for one kind of job: calls from now on take it; jobs waiting with the old jail
// (its allowed programs, its memory limit) are ended, and fresh ones started. A call already
// running keeps its job, and the snapshot its result maker holds.
template<typename Manager>
LiveSettings::Install installer(const std::shared_ptr<SystemTools> &tools,
                                LiveSnapshot<Manager> SystemTools::*snapshot, const QString &kind,
                                std::shared_ptr<const Manager> next)
{
    return [tools, snapshot, kind, next] {
        const bool sameJail = ((*tools).*snapshot).current()->jobAwaitingInput().policy
                == next->jobAwaitingInput().policy;
        ((*tools).*snapshot).replace(next);
        if (!sameJail && tools->runner)
            tools->runner->keepWarm(kind, next->jobAwaitingInput(), next->templateJob(),
                                    next->options().warmJobs, tools->policy.hasLayer("identity"));
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
                 return installer(tools, &SystemTools::bash, kCommandKind, std::move(next));
             });
    live.add({QStringLiteral("PYTHON_MEMORY_LIMIT"), QStringLiteral("PYTHON_TIMEOUT_DEFAULT"),
              QStringLiteral("PYTHON_TIMEOUT_MAX")},
             [tools](const Settings &changed, QString *error) -> LiveSettings::Install {
                 std::shared_ptr<const PythonManager> next =
                         PythonManager::fromConfig(changed, tools->policy, error);
                 if (!next)
                     return {};
                 return installer(tools, &SystemTools::python, kPythonKind, std::move(next));
             });
    // Read on the event loop only, once per call as it starts its background job.
    live.add({QStringLiteral("JOB_TIMEOUT_MAX")},
             [tools](const Settings &changed, QString *) -> LiveSettings::Install {
                 return [tools, seconds = int(changed.integer(u"JOB_TIMEOUT_MAX"))] {
                     if (tools->runner)
                         tools->runner->setTimeoutMaxSeconds(seconds);
                 };
             });
}

} // namespace

bool registerSystemTools(const ToolFamily &family, QString *error)
{
    McpServer &server = family.server;
    const Settings &settings = family.settings;
    const SandboxCapabilities &capabilities = family.sandbox;
    LiveSettings *live = family.live;
    const std::shared_ptr<SystemTools> tools = createSystemTools(settings, capabilities, error);
    if (!tools)
        return false;
    logEnforcement(*tools);
    tools->runner = &JobRunner::of(server, settings);
    const std::shared_ptr<JobNetworkGate> gate = JobNetworkGate::fromSettings(settings, error);
    if (!gate)
        return false;
    tools->runner->setEgress(gate);
    // Without the identity layer (a daemon that is neither root nor able to make user
    // namespaces) no job can start: none is kept waiting either.
    const bool jobsCanStart = tools->policy.hasLayer("identity");
    const std::shared_ptr<const BashManager> bash = tools->bash.current();
    tools->runner->keepWarm(kCommandKind, bash->jobAwaitingInput(), bash->templateJob(),
                            bash->options().warmJobs, jobsCanStart);
    const std::shared_ptr<const PythonManager> python = tools->python.current();
    tools->runner->keepWarm(kPythonKind, python->jobAwaitingInput(), python->templateJob(),
                            python->options().warmJobs, jobsCanStart);
    if (live)
        registerLiveSystemSettings(*live, tools);
    ToolRegistry &registry = server.tools();
    registry.add(tools::makeTool(
            "system_run_command", "Run a shell command",
            "Runs a bash command in a sandbox, in the workspace the file tools see. Only the "
            "allowed programs run (a refusal names them); no network unless the operator allows "
            "it. Returns stdout, stderr, exit_code and success; sandbox_refusals lists what the "
            "sandbox refused.",
            tools::withWorkspaceArgument(systemschemas::commandInput()),
            systemschemas::commandOutput(),
            {.readOnly = false, .destructive = true, .idempotent = false, .openWorld = false},
            [tools](const std::shared_ptr<ToolCall> &call) { runJob(*tools, call, commandCall); },
            TaskSupport::Optional));
    registry.add(tools::makeTool(
            "system_run_python", "Run Python code",
            "Runs Python 3 code (standard library only) in a sandbox, in the workspace the file "
            "tools see, with a memory limit and no network unless the operator allows it. Set _ "
            "to return a value as result. Returns output, error, result and success.",
            tools::withWorkspaceArgument(systemschemas::pythonInput()),
            systemschemas::pythonOutput(),
            {.readOnly = false, .destructive = true, .idempotent = false, .openWorld = false},
            [tools](const std::shared_ptr<ToolCall> &call) { runJob(*tools, call, pythonCall); },
            TaskSupport::Optional));
    registry.add(tools::makeTool(
            "system_env_var", "Sandbox environment variables",
            "The environment variables sandboxed commands and code see, and var_name's value "
            "as requested_var (null when unset).",
            systemschemas::envInput(), systemschemas::envOutput(),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
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
    return QJsonObject{
            {QStringLiteral("command"),
             QJsonObject{{QStringLiteral("program"), command.request->program},
                         {QStringLiteral("arguments"),
                          QJsonArray::fromStringList(command.request->arguments)},
                         {QStringLiteral("policy"), jailPolicyObject(command.request->policy)}}},
            {QStringLiteral("python"),
             QJsonObject{{QStringLiteral("program"), python.request->program},
                         {QStringLiteral("policy"), jailPolicyObject(python.request->policy)}}}};
}

} // namespace cmcp
