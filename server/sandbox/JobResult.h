#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// One output stream as the result carries it: capped, with the rest in a spill file.
struct CapturedStream
{
    QByteArray head; // all of it when not truncated
    QByteArray tail; // empty when not truncated
    qint64 totalBytes = 0;
    bool truncated = false;
    QString spillPath; // the complete output; set only when truncated and the spill worked
    QString spillError; // why there is no complete spill file; empty otherwise

    // head, then (when truncated) a marker line naming how much was left out, then tail.
    QString text() const;
};

// The jail refused the job before any of its code ran.
struct JobRefusal
{
    QString layer; // the layer that failed closed, or "usage" / "policy"
    int code = 0; // cmcp-jail's exit status for it, 90..99
    QString message;
};

// Something the sandbox refused the job while it ran, so that a bare "Permission denied" or
// "Killed" in its output can be told apart: a connection the egress gate refused, a limit that
// was reached.
struct SandboxRefusal
{
    QString layer; // egress, time, memory, pids, seccomp, quota
    QString rule; // what decided: a setting (JOB_NETWORK_ALLOWED_DOMAINS ...) or the limit
    QString target; // what the job asked for (host:port, a URL); empty for a limit
    QString message; // one sentence naming all of it
    QString syscall = {}; // seccomp: the denied syscall (empty: calls beyond the named ones)
    qint64 count = 0; // seccomp: how many calls were denied; 0 for a single refusal
};

// The accounting record of one job: how it ended, what it cost, what isolated it.
struct JobResult
{
    std::optional<int> exitCode; // set when the job exited on its own
    std::optional<int> signal; // set when a signal ended it
    bool timedOut = false; // the wall-clock limit killed it
    bool cancelled = false; // cancel() killed it
    bool oomKilled = false;
    // The job failed with its workspace full: the workspace's quota, in bytes.
    std::optional<qint64> workspaceQuotaBytes;
    qint64 wallMs = 0;
    std::optional<qint64> cpuMs; // unknown when the jail could not report
    std::optional<qint64> peakMemoryKb; // unknown without a memory cgroup
    QStringList layers; // the layers the jail reported active
    bool insecure = false; // SANDBOX_INSECURE: the daemon runs below SANDBOX_REQUIRE
    CapturedStream standardOutput;
    CapturedStream standardError;
    std::optional<JobRefusal> refusal;
    QString error; // the supervisor failed (e.g. cmcp-jail could not be started)
    QStringList reportErrors; // what in the jail's report could not be understood
    QByteArray channel; // what the job wrote on its result channel (JobSpec::resultChannel)
    bool channelOverflowed = false; // it wrote more than the cap; the rest was dropped
    QList<SandboxRefusal> sandboxRefusals; // in the order they happened, limits last
    qsizetype sandboxRefusalsLeftOut = 0; // beyond the listed ones

    bool truncated() const { return standardOutput.truncated || standardError.truncated; }
    // snake_case keys, for an MCP result's structuredContent: exit_code, signal, timed_out,
    // cancelled, oom_killed, truncated, wall_ms, cpu_ms, peak_memory_kb, layers, insecure,
    // stdout, stderr, stdout_bytes, stderr_bytes, and when they apply stdout_spill,
    // stderr_spill, spill_errors, refused {layer, code, message}, error, report_errors,
    // workspace_quota_mb, sandbox_refusals [{layer, rule, target, message, syscall, count}],
    // sandbox_refusals_left_out.
    QJsonObject toJson() const;
    // Why a job ended, in a few words for a log line: the refusal, the error, the exit code or
    // the signal; "no reason reported" without any.
    QString endReason() const;
};

} // namespace cmcp
