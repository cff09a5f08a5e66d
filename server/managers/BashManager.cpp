#include "managers/BashManager.h"

#include "jail/protocol/CellProtocol.h"

#include "managers/CommandPrecheck.h"
#include "common/Settings.h"

namespace cmcp {

namespace {

const QString kUnrestricted = QStringLiteral("*");

} // namespace

std::optional<QString> workspaceRelativeDirectory(const QString &workingDir, QString *error)
{
    if (workingDir.contains(QChar(0))) {
        *error = QStringLiteral("working_dir contains a NUL character");
        return std::nullopt;
    }
    // "/" is the workspace's root, as for the file tools.
    QStringList parts;
    for (const QString &part : workingDir.split(QLatin1Char('/'), Qt::SkipEmptyParts)) {
        if (part == QLatin1String("."))
            continue;
        if (part == QLatin1String("..")) {
            *error = QStringLiteral("working_dir '%1' leaves the workspace: '..' is not allowed")
                             .arg(workingDir);
            return std::nullopt;
        }
        parts.append(part);
    }
    return parts.join(QLatin1Char('/'));
}

QList<QPair<QString, QString>> baseJobEnvironment(const QString &workspaceInside)
{
    return {{QStringLiteral("HOME"), workspaceInside},
            {QStringLiteral("USER"), QStringLiteral("sandbox")},
            {QStringLiteral("LOGNAME"), QStringLiteral("sandbox")},
            {QStringLiteral("SHELL"), QStringLiteral("/bin/bash")},
            {QStringLiteral("TMPDIR"), QStringLiteral("/tmp")},
            {QStringLiteral("LANG"), QStringLiteral("C.UTF-8")},
            {QStringLiteral("TERM"), QStringLiteral("dumb")}};
}

std::unique_ptr<BashManager> BashManager::fromConfig(const Settings &settings,
                                                     const JobPolicy &policy, QString *error)
{
    Options options{JobToolOptions::fromSettings(settings, u"BASH"),
                    settings.list(u"BASH_ALLOWED_COMMANDS")};

    ProgramFiles files;
    const std::optional<FoundProgram> bash = files.addByName(QStringLiteral("bash"), error);
    if (!bash) {
        error->prepend(QStringLiteral("system_run_command needs bash: "));
        return nullptr;
    }
    QList<FoundProgram> allowed;
    if (options.allowedCommands.contains(kUnrestricted)) {
        if (options.allowedCommands.size() != 1) {
            *error = QStringLiteral("BASH_ALLOWED_COMMANDS: '*' (every program) cannot be "
                                    "combined with names");
            return nullptr;
        }
    } else {
        for (const QString &name : options.allowedCommands) {
            std::optional<FoundProgram> program = files.addByName(name, error);
            if (!program) {
                error->prepend(QStringLiteral("BASH_ALLOWED_COMMANDS: %1: ").arg(name));
                return nullptr;
            }
            allowed.append(*program);
        }
    }
    return std::make_unique<BashManager>(std::move(options), policy, std::move(files),
                                         bash->realPath, std::move(allowed));
}

BashManager::BashManager(Options options, const JobPolicy &policy, ProgramFiles files, QString bash,
                         QList<FoundProgram> allowed)
    : m_options(std::move(options)),
      m_policy(policy),
      m_files(std::move(files)),
      m_bash(std::move(bash)),
      m_allowed(std::move(allowed)),
      m_unrestricted(m_options.allowedCommands == QStringList{kUnrestricted})
{
}

JobPolicySpec BashManager::spec(const QString &cwd) const
{
    JobPolicySpec spec;
    spec.executables = m_files.executables();
    spec.mappable = m_files.mappable();
    spec.unrestrictedPrograms = m_unrestricted;
    spec.bin = m_allowed;
    spec.network = m_options.network;
    spec.cwd = cwd;
    spec.environment = baseJobEnvironment(m_policy.jobWorkspace());
    spec.apparmorProfile = m_options.apparmorProfile;
    return spec;
}

JailPolicy BashManager::policy(const QString &cwd) const
{
    return m_policy.build(spec(cwd));
}

QList<QPair<QString, QString>> BashManager::environment() const
{
    const JobPolicySpec base = spec({});
    QList<QPair<QString, QString>> environment = base.environment;
    environment.append({QStringLiteral("PATH"), m_policy.path(base)});
    return environment;
}

// The command arrives on standard input, so that a job can be started before its command is
// known (WarmJobPool), and every command runs the same way, pre-started or not. The wrapper
// reads it whole, gives the command /dev/null as its standard input, sets umask 002 (the
// workspace is shared with the file tools and other jobs' uids through the sandbox group, so
// what a command creates must stay group-writable), and evaluates it, on one line so that
// bash's messages keep the command's line numbers. The kernel's allow-list holds for whatever
// the wrapper runs.
JobRequest BashManager::jobAwaitingInput() const
{
    JobRequest job;
    job.program = m_bash;
    job.arguments = {QStringLiteral("--norc"), QStringLiteral("--noprofile"), QStringLiteral("-c"),
                     QStringLiteral("IFS= read -r -d '' CMCP_COMMAND; exec 0</dev/null; umask 002; "
                                    "eval \"unset CMCP_COMMAND; $CMCP_COMMAND\"")};
    job.policy = policy();
    return job;
}

JobRequest BashManager::templateJob() const
{
    JobRequest job = jobAwaitingInput();
    // The umask is the cell's, so every call has it; the builtin evaluates each command as
    // the wrapper's eval does.
    job.arguments.last() =
            QStringLiteral("umask 002; enable -f /proc/self/fd/%1 cmcp_zygote && cmcp_zygote")
                    .arg(cell_protocol::kZygoteLibraryFd);
    return job;
}

QByteArray BashManager::standardInput(const QString &command)
{
    return command.toUtf8();
}

JobRequest BashManager::keepingInputOpen(JobRequest job)
{
    // `read -d ''` stops at the NUL, reading byte by byte from a pipe, so nothing after it is
    // taken from the command.
    job.arguments.last() = QStringLiteral("IFS= read -r -d '' CMCP_COMMAND; umask 002; "
                                          "eval \"unset CMCP_COMMAND; $CMCP_COMMAND\"");
    job.standardInput.append('\0');
    job.interactiveInput = true;
    return job;
}

PreparedJob BashManager::prepare(const CommandRequest &request, bool precheck) const
{
    PreparedJob prepared;
    if (request.command.trimmed().isEmpty()) {
        prepared.refusal = QStringLiteral("command is empty");
        return prepared;
    }
    if (request.command.contains(QChar(0))) {
        prepared.refusal = QStringLiteral("command contains a NUL character");
        return prepared;
    }
    QString error;
    const std::optional<QString> cwd = workspaceRelativeDirectory(request.workingDir, &error);
    if (!cwd) {
        prepared.refusal = error;
        return prepared;
    }
    if (request.timeoutSeconds && *request.timeoutSeconds < 1) {
        prepared.refusal = QStringLiteral("timeout must be at least 1 second");
        return prepared;
    }
    if (precheck) {
        const PrecheckVerdict verdict = precheckCommand(request.command, m_options.allowedCommands);
        if (!verdict.allowed) {
            prepared.refusal = verdict.reason;
            return prepared;
        }
    }
    prepared.timeoutSeconds = m_options.timeoutSeconds(request.timeoutSeconds);

    JobRequest job = jobAwaitingInput();
    job.policy = policy(*cwd);
    job.standardInput = standardInput(request.command);
    job.timeoutMs = prepared.timeoutSeconds * 1000;
    prepared.request = job;
    return prepared;
}

} // namespace cmcp
