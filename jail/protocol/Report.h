// What cmcp-jail tells its supervisor on --report-fd: one JSON object per line, written only by
// the monitor (jail/report.cpp) and read by the daemon (server/sandbox/JailReport.cpp), both
// through reportLine and parseReportLine below, so that the records are one structure on both
// sides and their keys (ReportFields.h) are spelled in one writer and one reader:
//   {"event":"started","pid":P,"layers":[...],"cgroups":[...]}   the job's exec succeeded
//   {"event":"refused","layer":L,"code":C,"message":M}            a step failed closed
//   {"event":"exit","exit_code":N|null,"signal":N|null,"wall_ms":N,"cpu_ms":N,
//    "peak_memory_kb":N|null,"oom_killed":B,"pids_refused":N,"killed":B,
//    "seccomp_denied":[{"syscall":S,"errno":E,"count":N}...],"seccomp_denied_unnamed":N}
//                                                                  the job ended
// Plain C++ like the rest of the jail: no Qt, so that the jail links it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cmcp::jail {

struct Started
{
    std::int64_t pid = 0; // the job's host pid
    std::vector<std::string> layers; // the layers the jail applied
    // The job's cgroup directories, which the jail removes as it ends: told so that the
    // supervisor can remove them should the jail die (SIGKILL) first. Empty for a call forked
    // from a template, which has no cgroup of its own.
    std::vector<std::string> cgroups;
    bool operator==(const Started &) const = default;
};

struct Refusal
{
    std::string layer; // a layer name, or "usage" / "policy"
    int code = 0; // the jail's exit status, 90..99
    std::string message; // "cmcp-jail: <layer>: ..."
    bool operator==(const Refusal &) const = default;
};

// Calls of one syscall the job's seccomp filter denied.
struct SeccompDenial
{
    std::string syscall; // libseccomp's name, or "syscall <N>" for one it does not know
    std::string errnoName; // what the job got: EPERM, ENOSYS, EAFNOSUPPORT
    std::int64_t count = 0;
    bool operator==(const SeccompDenial &) const = default;
};

struct Exit
{
    std::optional<int> exitCode; // set when the job exited
    std::optional<int> signal; // set when a signal killed it
    std::int64_t wallMs = 0;
    std::int64_t cpuMs = 0;
    std::optional<std::int64_t> peakMemoryKb;
    bool oomKilled = false;
    std::int64_t pidsRefused = 0; // forks the cgroup's pids limit refused
    bool killed = false; // the jail killed the job because it was asked to
    // The filter's denials, when the jail counted them (a cold start on a kernel with seccomp
    // user notifications); empty when it denied nothing.
    std::optional<std::vector<SeccompDenial>> seccompDenied;
    std::int64_t seccompDeniedUnnamed = 0; // calls of syscalls beyond the named ones
    bool operator==(const Exit &) const = default;
};

using ReportRecord = std::variant<Started, Refusal, Exit>;

// One record as its line, newline included. Invalid UTF-8 in a string is replaced, never thrown.
std::string reportLine(const ReportRecord &record);

// One line (without its newline) back into its record; on anything else, nullopt and `error`
// says why: not JSON, an unknown event, a field missing or of the wrong type.
std::optional<ReportRecord> parseReportLine(std::string_view line, std::string *error);

} // namespace cmcp::jail
