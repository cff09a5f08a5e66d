// What the jail tells its supervisor. On --report-fd, JSON lines written only by the monitor:
//   {"event":"started","pid":P,"layers":[...]}         the job's exec succeeded
//   {"event":"refused","layer":L,"code":C,"message":M} a step failed closed; the jail exits C
//   {"event":"exit","exit_code":N|null,"signal":N|null,"wall_ms":N,"cpu_ms":N,
//    "peak_memory_kb":N|null,"oom_killed":B,"pids_refused":N,"killed":B,
//    "seccomp_denied":[{"syscall":S,"errno":E,"count":N}...],"seccomp_denied_unnamed":N}
//                                                       the job ended
// "seccomp_denied" is there only when the monitor counted the filter's denials (a cold start
// on a kernel with user notifications), [] for none; "seccomp_denied_unnamed" only when calls
// of more distinct syscalls than it names were denied.
// and, for a refusal, one line on stderr: "cmcp-jail: <layer>: <message>".
#pragma once

#include "jail/seccomp_denials.h"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cmcp::jail {

void setReportFd(int fd);

// The JSON record only (the stderr line was written by whoever failed).
void reportRefused(const std::string &layer, int code, const std::string &message);
// The stderr line and the record, then exit with `code`. For the monitor, before the job runs.
[[noreturn]] void refuse(const std::string &layer, int code, const std::string &message);

void reportStarted(pid_t pid, const std::vector<std::string> &layers,
                   const std::vector<std::string> &cgroups = {});

struct ExitRecord
{
    std::optional<int> exitCode; // set when the job exited
    std::optional<int> signal; // set when a signal killed it
    std::uint64_t wallMs = 0;
    std::uint64_t cpuMs = 0;
    std::optional<std::uint64_t> peakMemoryKb;
    bool oomKilled = false;
    std::uint64_t pidsRefused = 0; // forks the cgroup's pids limit refused
    bool killed = false; // the supervisor asked the jail to kill the job
    const SeccompDenials *seccompDenials = nullptr; // set when they were counted
};
void reportExit(const ExitRecord &record);

// The stderr line alone: "cmcp-jail: <layer>: <message>".
void writeRefusalLine(const std::string &layer, const std::string &message);

} // namespace cmcp::jail

namespace cmcp::jail {
// For the job process, before its exec: the stderr line, then "<layer>\n<message>" on
// `monitorFd` (the monitor turns it into the refused record), then exit with `code`.
[[noreturn]] void failJob(int monitorFd, const std::string &layer, int code,
                          const std::string &message);
} // namespace cmcp::jail
