#pragma once

#include <cstdint>

namespace cmcp {

// How often the kernel's OOM killer has killed a task of this process's memory cgroup (v1
// memory.oom_control or v2 memory.events, "oom_kill"): a root daemon starts the browser worker
// under cmcp-jail in a cgroup of its own (WEB_BROWSER_MEMORY_MB), so a renderer killed while
// this count rose was killed by that limit. 0 when there is no such cgroup or count.
std::uint64_t memoryCgroupOomKills();

} // namespace cmcp
