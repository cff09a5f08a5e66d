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

} // namespace

std::uint64_t memoryCgroupOomKills(pid_t pid)
{
    // "N:memory:/path" on v1 hierarchies, "0::/path" on the unified one.
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
            return keyedNumber("/sys/fs/cgroup/memory" + path + "/memory.oom_control", "oom_kill");
        if (controllers.empty())
            unified = path;
    }
    return unified.empty() ? 0
                           : keyedNumber("/sys/fs/cgroup" + unified + "/memory.events", "oom_kill");
}

} // namespace cmcp
