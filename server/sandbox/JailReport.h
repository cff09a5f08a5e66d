#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// What cmcp-jail wrote on its --report-fd, one JSON object per line (jail/report.h):
//   {"event":"started","pid":P,"layers":[...],"cgroups":[...]}
//   {"event":"refused","layer":L,"code":C,"message":M}
//   {"event":"exit","exit_code":N|null,"signal":N|null,"wall_ms":N,"cpu_ms":N,
//    "peak_memory_kb":N|null,"oom_killed":B,"pids_refused":N,"killed":B,
//    "seccomp_denied":[{"syscall":S,"errno":E,"count":N}...],"seccomp_denied_unnamed":N}
struct JailStarted
{
    qint64 pid = 0; // the job's host pid
    QStringList layers; // the layers the jail applied
    QStringList cgroups; // the job's cgroup directories, which the jail removes as it ends
};

struct JailRefusal
{
    QString layer; // a layer name, or "usage" / "policy"
    int code = 0; // the jail's exit status, 90..99
    QString message; // "cmcp-jail: <layer>: ..."
};

// Calls of one syscall the job's seccomp filter denied.
struct SeccompDenial
{
    QString syscall;
    QString errnoName; // what the job got: EPERM, ENOSYS, EAFNOSUPPORT
    qint64 count = 0;
};

struct JailExit
{
    std::optional<int> exitCode; // set when the job exited
    std::optional<int> signal; // set when a signal killed it
    qint64 wallMs = 0;
    qint64 cpuMs = 0;
    std::optional<qint64> peakMemoryKb;
    bool oomKilled = false;
    qint64 pidsRefused = 0; // forks the cgroup's pids limit refused
    bool killed = false; // the jail killed the job because it was asked to
    // The filter's denials, when the jail counted them (not for a template's calls, nor on a
    // kernel without seccomp user notifications); empty when it denied nothing.
    std::optional<QList<SeccompDenial>> seccompDenied;
    qint64 seccompDeniedUnnamed = 0; // calls of syscalls beyond the named ones
};

// Collects the records from the bytes of the report pipe as they arrive, in any split.
class JailReport
{
public:
    void addBytes(const QByteArray &bytes);
    // End of the pipe: a last line without its newline is still a record.
    void finish();

    const std::optional<JailStarted> &started() const { return m_started; }
    const std::optional<JailRefusal> &refusal() const { return m_refusal; }
    const std::optional<JailExit> &exit() const { return m_exit; }
    // Lines that were not a record this supervisor understands, each with why.
    const QStringList &errors() const { return m_errors; }

private:
    void parseLine(const QByteArray &line);

    QByteArray m_partialLine;
    bool m_overlongLine = false;
    std::optional<JailStarted> m_started;
    std::optional<JailRefusal> m_refusal;
    std::optional<JailExit> m_exit;
    QStringList m_errors;
};

} // namespace cmcp
