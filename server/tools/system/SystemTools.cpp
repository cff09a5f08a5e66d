#include "SystemTools.h"

#include "ToolBuilding.h"

#include "BashManager.h"
#include "JobCallBridge.h"
#include "JobPolicy.h"
#include "McpServer.h"
#include "PythonManager.h"
#include "SandboxSupervisor.h"
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
    std::unique_ptr<BashManager> bash;
    std::unique_ptr<PythonManager> python;
    // Jobs started ahead of their calls (BASH_WARM_JOBS, PYTHON_WARM_JOBS); null when none.
    std::unique_ptr<WarmJobPool> warmCommand;
    std::unique_ptr<WarmJobPool> warmPython;
};

std::shared_ptr<SystemTools>
createSystemTools(const Settings &settings, const SandboxCapabilities &capabilities, QString *error)
{
    const Workspace workspace = Workspace::fromSettings(settings);
    auto tools = std::make_shared<SystemTools>(capabilities, workspace,
                                               SandboxOptions::fromSettings(settings));
    tools->bash = BashManager::fromConfig(settings, tools->policy, error);
    if (!tools->bash)
        return nullptr;
    tools->python = PythonManager::fromConfig(settings, tools->policy, error);
    if (!tools->python)
        return nullptr;
    return tools;
}

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
                    const PreparedJob &prepared, WarmJobPool *warm,
                    JobCallBridge::ResultMaker makeResult)
{
    const bool inRoot =
            prepared.request && !prepared.request->policy.contains(QLatin1String("cwd"));
    if (inRoot && warm) {
        if (JailJob *job = warm->take()) {
            JobCallBridge::adopt(call, job, std::move(makeResult), prepared.request->standardInput,
                                 prepared.request->timeoutMs);
            return;
        }
    }
    runJob(tools, call, prepared, std::move(makeResult));
}

void runCommand(SystemTools &tools, const std::shared_ptr<ToolCall> &call)
{
    const QJsonObject arguments = call->arguments();
    CommandRequest request;
    request.command = arguments.value(QLatin1String("command")).toString();
    request.workingDir = arguments.value(QLatin1String("working_dir")).toString();
    request.timeoutSeconds = timeoutArgument(arguments);
    const PreparedJob prepared = tools.bash->prepare(request);
    const int timeoutSeconds = prepared.timeoutSeconds;
    auto makeResult = [timeoutSeconds](const JobResult &result) {
        if (const std::optional<QString> why = notRun(result))
            return failure(*why);
        QJsonObject value = accounting(result, timeoutSeconds, QStringLiteral("the command"));
        value.insert(QLatin1String("stdout"), result.standardOutput.text());
        value.insert(QLatin1String("stderr"), result.standardError.text());
        value.insert(QLatin1String("success"),
                     result.exitCode == 0 && !result.timedOut && !result.cancelled);
        return ToolResult::structured(value);
    };
    runPreparedJob(tools, call, prepared, tools.warmCommand.get(), std::move(makeResult));
}

void runPython(SystemTools &tools, const std::shared_ptr<ToolCall> &call)
{
    const QJsonObject arguments = call->arguments();
    PythonRequest request;
    request.code = arguments.value(QLatin1String("code")).toString();
    request.workingDir = arguments.value(QLatin1String("working_dir")).toString();
    request.timeoutSeconds = timeoutArgument(arguments);
    QByteArray nonce;
    const PreparedJob prepared = tools.python->prepare(request, &nonce);
    const int timeoutSeconds = prepared.timeoutSeconds;
    auto makeResult = [timeoutSeconds, nonce](const JobResult &result) {
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
        value.insert(QLatin1String("success"),
                     outcome.ranToEnd && !outcome.raised && outcome.exitStatus.value_or(0) == 0
                             && result.exitCode == 0 && !result.timedOut && !result.cancelled);
        return ToolResult::structured(value);
    };
    runPreparedJob(tools, call, prepared, tools.warmPython.get(), std::move(makeResult));
}

void envVar(SystemTools &tools, const std::shared_ptr<ToolCall> &call)
{
    // The environment sandboxed commands see is built by the daemon, from nothing of its own:
    // no variable of the daemon (a token, an API key) can be in it.
    QJsonObject variables;
    for (const auto &[name, value] : tools.bash->environment())
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
    const BashManager &bash = *tools.bash;
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

} // namespace

bool registerSystemTools(McpServer &server, const Settings &settings,
                         const SandboxCapabilities &capabilities, QString *error)
{
    const std::shared_ptr<SystemTools> tools = createSystemTools(settings, capabilities, error);
    if (!tools)
        return false;
    logEnforcement(*tools);
    // Without the identity layer (a daemon that is neither root nor able to make user
    // namespaces) no job can start: none is kept waiting either.
    const bool jobsCanStart = tools->policy.hasLayer("identity");
    if (const int warm = tools->bash->options().warmJobs; warm > 0 && jobsCanStart)
        tools->warmCommand = std::make_unique<WarmJobPool>(tools->supervisor,
                                                           tools->bash->jobAwaitingInput(), warm);
    if (const int warm = tools->python->options().warmJobs; warm > 0 && jobsCanStart)
        tools->warmPython = std::make_unique<WarmJobPool>(tools->supervisor,
                                                          tools->python->jobAwaitingInput(), warm);
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
    const PreparedJob command = tools->bash->prepare({QStringLiteral("true"), {}, {}}, false);
    QByteArray nonce;
    const PreparedJob python = tools->python->prepare({QString(), {}, {}}, &nonce);
    return QJsonObject{{QStringLiteral("command"),
                        QJsonObject{{QStringLiteral("program"), command.request->program},
                                    {QStringLiteral("arguments"),
                                     QJsonArray::fromStringList(command.request->arguments)},
                                    {QStringLiteral("policy"), command.request->policy}}},
                       {QStringLiteral("python"),
                        QJsonObject{{QStringLiteral("program"), python.request->program},
                                    {QStringLiteral("policy"), python.request->policy}}}};
}

} // namespace cmcp
