#pragma once

#include "managers/BashManager.h"
#include "sandbox/JobPolicy.h"
#include "sandbox/JobResult.h"
#include "sandbox/SandboxSupervisor.h"

#include <QJsonValue>
#include <QString>

#include <memory>
#include <optional>

namespace cmcp {

class Settings;

struct PythonRequest
{
    QString code;
    QString workingDir;
    std::optional<qint64> timeoutSeconds; // capped at PYTHON_TIMEOUT_MAX
};

// What the runner reported on the result channel, checked.
struct PythonOutcome
{
    QJsonValue result; // the value of _ after the code ran, as JSON; null when unset
    bool resultIsRepr = false; // _ was not JSON: result holds its repr()
    bool ranToEnd = false; // the runner reported: the code finished, raised or called sys.exit
    bool raised = false; // an exception ended the code (not SystemExit)
    std::optional<int> exitStatus; // sys.exit's status
    QString channelProblem; // why the channel's content was not accepted; empty when it was
};

// Runs system_run_python's code in the jail: the system's python3 in isolated mode (-I -S:
// standard library only, no environment, no user site), unbuffered so that output printed
// before a timeout, sys.exit or os._exit is kept. A small runner reads a per-call nonce and the
// code from stdin, runs the code in one namespace, and writes "<nonce>\n<json>" on the result
// channel (a descriptor of its own, never stdout), so output cannot pose as the result.
class PythonManager
{
public:
    struct Options : JobToolOptions // under PYTHON_
    {
        int memoryLimitMb = 256;
    };

    static std::unique_ptr<PythonManager> fromConfig(const Settings &settings,
                                                     const JobPolicy &policy, QString *error);
    PythonManager(Options options, const JobPolicy &policy, ProgramFiles files, QString python);

    const Options &options() const { return m_options; }

    // The job and the nonce its result must carry.
    PreparedJob prepare(const PythonRequest &request, QByteArray *nonce) const;
    // The job prepare() makes for a call in the workspace's root, without its input: one that
    // can be started before the call arrives (WarmJobPool) and given standardInput() then.
    JobRequest jobAwaitingInput() const;
    // The same job as a template's cells run it (jail/template.h): the interpreter
    // loads the zygote library and forks each call from there, the nonce and code taken from
    // the call's payload (standardInput()) instead of stdin.
    JobRequest templateJob() const;
    static QByteArray standardInput(const QByteArray &nonce, const QString &code);
    // The interpreter's interactive mode instead of the runner (a background job fed by
    // job_write_stdin): `code` runs first, then statements are read from standard input, which
    // stays open, and expression values are echoed. No result channel.
    JobRequest interactiveJob(const PreparedJob &prepared, const QString &code) const;
    JailPolicy policy(const QString &cwd = {}) const;
    // Reads the result channel of a finished job.
    static PythonOutcome outcome(const JobResult &result, const QByteArray &nonce);

private:
    Options m_options;
    const JobPolicy &m_policy;
    ProgramFiles m_files;
    QString m_python;
};

} // namespace cmcp
