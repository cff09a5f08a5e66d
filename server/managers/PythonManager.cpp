#include "managers/PythonManager.h"

#include "managers/PythonRunner.h"
#include "common/Settings.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>

namespace cmcp {

namespace {

// The extension modules of the standard library (ssl, sqlite3, ctypes, ...): shared objects
// Python maps at run time, so under exec_paths each must be named, with its libraries.
QString extensionModuleDirectory(const QString &pythonRealPath)
{
    return QStringLiteral("/usr/lib/%1/lib-dynload").arg(QFileInfo(pythonRealPath).fileName());
}

} // namespace

std::unique_ptr<PythonManager> PythonManager::fromConfig(const Settings &settings,
                                                         const JobPolicy &policy, QString *error)
{
    Options options{JobToolOptions::fromSettings(settings, u"PYTHON"),
                    int(settings.integer(u"PYTHON_MEMORY_LIMIT"))};

    // The system's interpreter, never a pyenv shim or a virtual environment on the daemon's PATH.
    ProgramFiles files;
    const std::optional<FoundProgram> python = files.addByName(QStringLiteral("python3"), error);
    if (!python) {
        error->prepend(QStringLiteral("system_run_python needs /usr/bin/python3: "));
        return nullptr;
    }
    const QDir modules(extensionModuleDirectory(python->realPath));
    for (const QFileInfo &module : modules.entryInfoList({QStringLiteral("*.so")}, QDir::Files)) {
        if (!files.addLibrary(module.canonicalFilePath(), error)) {
            error->prepend(QStringLiteral("system_run_python: "));
            return nullptr;
        }
    }
    return std::make_unique<PythonManager>(std::move(options), policy, std::move(files),
                                           python->realPath);
}

PythonManager::PythonManager(Options options, const JobPolicy &policy, ProgramFiles files,
                             QString python)
    : m_options(std::move(options)),
      m_policy(policy),
      m_files(std::move(files)),
      m_python(std::move(python))
{
}

JailPolicy PythonManager::policy(const QString &cwd) const
{
    JobPolicySpec spec;
    spec.executables = m_files.executables();
    spec.mappable = m_files.mappable();
    spec.network = m_options.network;
    spec.memoryBytes = qint64(m_options.memoryLimitMb) * 1024 * 1024;
    spec.cwd = cwd;
    spec.environment = baseJobEnvironment(m_policy.jobWorkspace());
    spec.apparmorProfile = m_options.apparmorProfile;
    return m_policy.build(spec);
}

PreparedJob PythonManager::prepare(const PythonRequest &request, QByteArray *nonce) const
{
    PreparedJob prepared;
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
    prepared.timeoutSeconds = m_options.timeoutSeconds(request.timeoutSeconds);

    quint64 random[2];
    QRandomGenerator::system()->fillRange(random);
    *nonce = QByteArray(reinterpret_cast<const char *>(random), sizeof random).toHex();

    JobRequest job = jobAwaitingInput();
    job.policy = policy(*cwd);
    job.standardInput = standardInput(*nonce, request.code);
    job.timeoutMs = prepared.timeoutSeconds * 1000;
    prepared.request = job;
    return prepared;
}

JobRequest PythonManager::jobAwaitingInput() const
{
    JobRequest job;
    job.program = m_python;
    job.arguments = {QStringLiteral("-I"), QStringLiteral("-S"), QStringLiteral("-u"),
                     QStringLiteral("-c"), pythonRunnerSource()};
    job.policy = policy();
    job.resultChannel = true;
    return job;
}

JobRequest PythonManager::templateJob() const
{
    JobRequest job = jobAwaitingInput();
    job.arguments.last() = pythonZygoteSource();
    return job;
}

JobRequest PythonManager::interactiveJob(const PreparedJob &prepared, const QString &code) const
{
    JobRequest job = *prepared.request;
    // Nothing of the prelude stays in __main__'s namespace, which the session then uses.
    job.arguments = {QStringLiteral("-I"),
                     QStringLiteral("-S"),
                     QStringLiteral("-u"),
                     QStringLiteral("-i"),
                     QStringLiteral("-c"),
                     QStringLiteral("__import__('os').umask(0o002); exec(compile(__import__('sys')"
                                    ".argv[1], '<code>', 'exec'))"),
                     code};
    job.standardInput.clear();
    job.resultChannel = false;
    job.interactiveInput = true;
    return job;
}

QByteArray PythonManager::standardInput(const QByteArray &nonce, const QString &code)
{
    return nonce + '\n' + code.toUtf8();
}

PythonOutcome PythonManager::outcome(const JobResult &result, const QByteArray &nonce)
{
    PythonOutcome outcome;
    if (result.channel.isEmpty())
        return outcome; // the code never returned to the runner (os._exit, a kill)
    if (result.channelOverflowed) {
        outcome.channelProblem = QStringLiteral("the result is larger than %1 MB and was dropped")
                                         .arg(JailJob::kResultChannelCapBytes / (1024 * 1024));
        return outcome;
    }
    const qsizetype newline = result.channel.indexOf('\n');
    if (newline < 0 || result.channel.left(newline) != nonce) {
        outcome.channelProblem = QStringLiteral(
                "the result channel held something other than the runner's report (the code "
                "wrote to it); the result was dropped");
        return outcome;
    }
    QJsonParseError parseError{};
    const QJsonDocument report =
            QJsonDocument::fromJson(result.channel.mid(newline + 1), &parseError);
    if (!report.isObject()) {
        outcome.channelProblem = QStringLiteral("the runner's report is not valid JSON (%1)")
                                         .arg(parseError.errorString());
        return outcome;
    }
    const QJsonObject object = report.object();
    outcome.ranToEnd = object.value(QLatin1String("ran")).toBool();
    outcome.raised = object.value(QLatin1String("raised")).toBool();
    if (const QJsonValue status = object.value(QLatin1String("exit_status")); status.isDouble())
        outcome.exitStatus = status.toInt();
    outcome.result = object.value(QLatin1String("result"));
    if (outcome.result.isUndefined())
        outcome.result = QJsonValue::Null;
    outcome.resultIsRepr = object.value(QLatin1String("repr")).toBool();
    return outcome;
}

} // namespace cmcp
