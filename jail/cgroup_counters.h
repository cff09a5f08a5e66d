// A cgroup's counters read through descriptors: the monitor opens them (host root) for a cell,
// which reads them before and after each of its calls without any path of the host (its root
// has no /sys/fs/cgroup). Plain libc, for cmcp-jail and its zygote library alike.
#pragma once

#include "jail/layers.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cmcp::jail {

// One interface file of the cgroup, by its name ("cpuacct.usage", "memory.peak", ...).
struct CounterFile
{
    std::string name;
    int fd = -1;
};

// Every counter file of `cgroup` a cell reads: CPU time (v1 cpuacct.usage, v2 cpu.stat), peak
// memory (v1 memory.max_usage_in_bytes, v2 memory.peak; opened for writing too, to reset it),
// OOM kills (v1 memory.oom_control, v2 memory.events) and refused forks (pids.events). The
// descriptors are close-on-exec; a file a hierarchy lacks is left out.
std::vector<CounterFile> openCounters(const JobCgroup &cgroup);

struct CounterReading
{
    std::optional<std::uint64_t> cpuNanoseconds;
    std::optional<std::uint64_t> peakMemoryBytes;
    std::uint64_t oomKills = 0;
    std::uint64_t pidsRefused = 0;
};
CounterReading readCounters(const std::vector<CounterFile> &counters);

// Starts the peak afresh from the present usage. False when the kernel cannot (cgroup v2 before
// Linux 6.12 has no reset): the peak then spans earlier calls too and must not be reported.
bool resetPeakMemory(const std::vector<CounterFile> &counters);

} // namespace cmcp::jail
