#pragma once

#include "managers/JobToolOptions.h"
#include "sandbox/JobPolicy.h"
#include "sandbox/SandboxSupervisor.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace cmcp {

class Settings;

struct CommandRequest
{
    QString command;
    QString workingDir; // relative to the workspace; empty: the workspace itself
    std::optional<qint64> timeoutSeconds; // capped at BASH_TIMEOUT_MAX
};

// A job ready for the supervisor, or why there is none.
struct PreparedJob
{
    std::optional<JobRequest> request;
    QString refusal;
    int timeoutSeconds = 0;
};

// Runs system_run_command's commands with bash inside the jail. BASH_ALLOWED_COMMANDS is
// enforced by the kernel: the job may execute bash and exactly the allowed program files
// (Landlock), every other file beneath /usr is mounted noexec (exec_paths), and PATH holds
// links to the allowed programs only. The daemon's pre-check (CommandPrecheck) refuses early
// with a clear message; nothing here depends on it.
class BashManager
{
public:
    struct Options : JobToolOptions // under BASH_
    {
        QStringList allowedCommands; // names; "*" alone: every program beneath /usr
    };

    // Resolves bash and every allowed program, with the files each needs to start, once.
    // nullptr with a reason naming the program when one cannot be used.
    static std::unique_ptr<BashManager> fromConfig(const Settings &settings,
                                                   const JobPolicy &policy, QString *error);
    BashManager(Options options, const JobPolicy &policy, ProgramFiles files, QString bash,
                QList<FoundProgram> allowed);

    bool unrestricted() const { return m_unrestricted; }
    const Options &options() const { return m_options; }

    // The pre-check, then the job. `precheck` false skips the pre-check: only for tests that
    // prove the kernel refuses on its own.
    PreparedJob prepare(const CommandRequest &request, bool precheck = true) const;
    // The job prepare() makes for a command in the workspace's root, without its command: one
    // that can be started before the call arrives (WarmJobPool) and given standardInput() then.
    JobRequest jobAwaitingInput() const;
    // The same job as a template's cells run it (jail/template.h): bash loads the
    // zygote library as a builtin and forks each call from there, the command taken from the
    // call's payload (standardInput()) instead of stdin and evaluated as the wrapper's eval
    // does.
    JobRequest templateJob() const;
    static QByteArray standardInput(const QString &command);
    // A prepared job made interactive (a background job fed by job_write_stdin): the command
    // ends at a NUL byte on standard input, which then stays open as the command's own input.
    static JobRequest keepingInputOpen(JobRequest job);
    // The policy every command runs under (without uid and gid), for a working directory.
    JailPolicy policy(const QString &cwd = {}) const;
    // The environment commands see, PATH included.
    QList<QPair<QString, QString>> environment() const;

private:
    JobPolicySpec spec(const QString &cwd) const;

    Options m_options;
    const JobPolicy &m_policy;
    ProgramFiles m_files;
    QString m_bash;
    QList<FoundProgram> m_allowed;
    bool m_unrestricted = false;
};

// A working_dir argument as the jail's "cwd": relative, clean, never leaving the workspace. The
// jail resolves it with openat2(RESOLVE_BENEATH) too; this gives the clear message first.
std::optional<QString> workspaceRelativeDirectory(const QString &workingDir, QString *error);

// HOME, LANG, TMPDIR, USER and the others every job sees (PATH is added per job kind).
QList<QPair<QString, QString>> baseJobEnvironment(const QString &workspaceInside);

} // namespace cmcp
