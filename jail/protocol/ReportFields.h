// The names of the records cmcp-jail writes on its --report-fd (Report.h says what each
// means), spelled only by that record's one writer and one reader (Report.cpp).
#pragma once

namespace cmcp::jail_protocol::report {

// Every record: which it is.
inline constexpr const char *kEvent = "event";

// {"event":"started","pid":P,"layers":[...],"cgroups":[...]}: the job's exec succeeded.
inline constexpr const char *kStarted = "started";
inline constexpr const char *kPid = "pid";
inline constexpr const char *kLayers = "layers";
inline constexpr const char *kCgroups = "cgroups";

// {"event":"refused","layer":L,"code":C,"message":M}: a step failed closed.
inline constexpr const char *kRefused = "refused";
inline constexpr const char *kLayer = "layer";
inline constexpr const char *kCode = "code";
inline constexpr const char *kMessage = "message";

// {"event":"exit",...}: the job ended.
inline constexpr const char *kExit = "exit";
inline constexpr const char *kExitCode = "exit_code";
inline constexpr const char *kSignal = "signal";
inline constexpr const char *kWallMs = "wall_ms";
inline constexpr const char *kCpuMs = "cpu_ms";
inline constexpr const char *kPeakMemoryKb = "peak_memory_kb";
inline constexpr const char *kOomKilled = "oom_killed";
inline constexpr const char *kPidsRefused = "pids_refused";
inline constexpr const char *kKilled = "killed";
inline constexpr const char *kSeccompDenied = "seccomp_denied";
inline constexpr const char *kSeccompDeniedUnnamed = "seccomp_denied_unnamed";
// Each entry of "seccomp_denied".
inline constexpr const char *kSyscall = "syscall";
inline constexpr const char *kErrno = "errno";
inline constexpr const char *kCount = "count";

} // namespace cmcp::jail_protocol::report
