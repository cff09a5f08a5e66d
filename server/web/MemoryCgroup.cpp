#include "web/MemoryCgroup.h"

#include <fstream>
#include <string>

namespace cmcp {

namespace {

std::uint64_t keyedNumber(const std::string &path, const std::string &key)
{
    std::ifstream file(path);
    std::string name;
    std::uint64_t value = 0;
    while (file >> name >> value) {
        if (name == key)
            return value;
    }
    return 0;
}

// The directory of the memory cgroup process `pid` is in, and whether it is a v1 hierarchy's;
// empty when there is none. "N:memory:/path" on v1 hierarchies, "0::/path" on the unified one.
struct MemoryCgroupDirectory
{
    std::string path;
    bool v1 = false;
};

MemoryCgroupDirectory memoryCgroupOf(pid_t pid)
{
    std::ifstream cgroups("/proc/" + std::to_string(pid) + "/cgroup");
    std::string line, unified;
    while (std::getline(cgroups, line)) {
        const auto first = line.find(':');
        const auto second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos)
            continue;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        const std::string path = line.substr(second + 1);
        if (controllers == "memory")
            return {"/sys/fs/cgroup/memory" + path, true};
        if (controllers.empty())
            unified = path;
    }
    return {unified.empty() ? std::string() : "/sys/fs/cgroup" + unified, false};
}

} // namespace

std::uint64_t memoryCgroupOomKills(pid_t pid)
{
    const MemoryCgroupDirectory cgroup = memoryCgroupOf(pid);
    if (cgroup.path.empty())
        return 0;
    return cgroup.v1 ? keyedNumber(cgroup.path + "/memory.oom_control", "oom_kill")
                     : keyedNumber(cgroup.path + "/memory.events", "oom_kill");
}

std::uint64_t memoryCgroupResidentBytes(pid_t pid)
{
    const MemoryCgroupDirectory cgroup = memoryCgroupOf(pid);
    if (cgroup.path.empty())
        return 0;
    // Anonymous memory and shared memory (Chromium's renderers share theirs through /dev/shm);
    // the page cache is left out, since the kernel reclaims it before the limit is reached.
    const std::string stat = cgroup.path + "/memory.stat";
    return cgroup.v1 ? keyedNumber(stat, "total_rss") + keyedNumber(stat, "total_shmem")
                     : keyedNumber(stat, "anon") + keyedNumber(stat, "shmem");
}

} // namespace cmcp
