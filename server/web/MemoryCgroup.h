#pragma once

#include <sys/types.h>

#include <cstdint>

namespace cmcp {

// How often the kernel's OOM killer has killed a task of the memory cgroup process `pid` is in
// (v1 memory.oom_control or v2 memory.events, "oom_kill"), as the daemon sees it: a root
// daemon starts each browser worker under cmcp-jail in a cgroup of its own
// (WEB_BROWSER_MEMORY_MB), so a renderer killed while this count rose was killed by that limit.
// 0 when there is no such process, cgroup or count.
std::uint64_t memoryCgroupOomKills(pid_t pid);

// The anonymous and shared memory, in bytes, that the memory cgroup of process `pid` holds
// (its tasks together); 0 when there is no such process or cgroup.
std::uint64_t memoryCgroupResidentBytes(pid_t pid);

} // namespace cmcp
