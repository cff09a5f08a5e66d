#include "ProcStats.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <string>

namespace cmcp::bench {

qint64 cpuNs(pid_t pid)
{
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR *tasks = opendir(dir.c_str());
    if (!tasks)
        return -1;
    qint64 total = 0;
    while (dirent *entry = readdir(tasks)) {
        if (entry->d_name[0] == '.')
            continue;
        FILE *file = std::fopen((dir + "/" + entry->d_name + "/schedstat").c_str(), "r");
        if (!file)
            continue;
        long long ns = 0;
        if (std::fscanf(file, "%lld", &ns) == 1)
            total += ns;
        std::fclose(file);
    }
    closedir(tasks);
    return total;
}

long statusKb(pid_t pid, const char *field)
{
    FILE *file = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
    if (!file)
        return -1;
    char line[256];
    long kb = -1;
    const size_t length = std::strlen(field);
    while (std::fgets(line, sizeof line, file)) {
        if (std::strncmp(line, field, length) == 0 && line[length] == ':') {
            kb = std::atol(line + length + 1);
            break;
        }
    }
    std::fclose(file);
    return kb;
}

int threadCount(pid_t pid)
{
    return int(statusKb(pid, "Threads"));
}

} // namespace cmcp::bench
