// What /proc tells of the spawned daemon: its CPU time, its memory and its threads.
#pragma once

#include <QtGlobal>

#include <sys/types.h>

namespace cmcp::bench {

// CPU time of every thread of `pid`, in nanoseconds (schedstat: time spent on the CPU).
qint64 cpuNs(pid_t pid);
// A "Name: N kB" field of /proc/PID/status (or a plain count such as "Threads"); -1 if absent.
long statusKb(pid_t pid, const char *field);
int threadCount(pid_t pid);

} // namespace cmcp::bench
