#include "jail/cgroup_counters.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string_view>

namespace cmcp::jail {

namespace {

// Read for writing too: the peak is reset through the same descriptor it is read from (on v2
// the reset holds for that open file only).
constexpr const char *kPeakFiles[] = {"memory.max_usage_in_bytes", "memory.peak"};
constexpr const char *kReadOnlyFiles[] = {"cpuacct.usage", "cpu.stat", "memory.oom_control",
                                          "memory.events", "pids.events"};

std::optional<std::uint64_t> parseNumber(std::string_view text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.remove_suffix(1);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// "key value" lines (cpu.stat, memory.events, memory.oom_control, pids.events).
std::optional<std::uint64_t> keyedNumber(std::string_view text, std::string_view key)
{
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        if (line.size() > key.size() && line.substr(0, key.size()) == key
            && line[key.size()] == ' ')
            return parseNumber(line.substr(key.size() + 1));
        if (end == std::string_view::npos)
            break;
        text.remove_prefix(end + 1);
    }
    return std::nullopt;
}

// Into `buffer`, nothing allocated: a cell reads these around every call, in pages that the
// call's fork made copy-on-write.
bool readAt(int fd, char (&buffer)[1024], std::string_view &text)
{
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, 0);
    if (n < 0)
        return false;
    text = std::string_view(buffer, std::size_t(n));
    return true;
}

} // namespace

std::vector<CounterFile> openCounters(const JobCgroup &cgroup)
{
    std::vector<CounterFile> counters;
    for (const std::string &dir : cgroup.dirs) {
        for (const char *name : kPeakFiles)
            if (const int fd = ::open((dir + "/" + name).c_str(), O_RDWR | O_CLOEXEC); fd >= 0)
                counters.push_back({name, fd});
        for (const char *name : kReadOnlyFiles)
            if (const int fd = ::open((dir + "/" + name).c_str(), O_RDONLY | O_CLOEXEC); fd >= 0)
                counters.push_back({name, fd});
    }
    return counters;
}

CounterReading readCounters(const std::vector<CounterFile> &counters)
{
    CounterReading reading;
    char buffer[1024];
    std::string_view text;
    for (const CounterFile &counter : counters) {
        if (!readAt(counter.fd, buffer, text))
            continue;
        const std::string_view name = counter.name;
        if (name == "cpuacct.usage" && !reading.cpuNanoseconds) {
            reading.cpuNanoseconds = parseNumber(text);
        } else if (name == "cpu.stat" && !reading.cpuNanoseconds) {
            if (const auto us = keyedNumber(text, "usage_usec"))
                reading.cpuNanoseconds = *us * 1000;
        } else if ((name == "memory.max_usage_in_bytes" || name == "memory.peak")
                   && !reading.peakMemoryBytes) {
            reading.peakMemoryBytes = parseNumber(text);
        } else if (name == "memory.oom_control" || name == "memory.events") {
            reading.oomKills += keyedNumber(text, "oom_kill").value_or(0);
        } else if (name == "pids.events") {
            reading.pidsRefused += keyedNumber(text, "max").value_or(0);
        }
    }
    return reading;
}

bool resetPeakMemory(const std::vector<CounterFile> &counters)
{
    bool reset = false;
    for (const CounterFile &counter : counters) {
        if (counter.name != "memory.max_usage_in_bytes" && counter.name != "memory.peak")
            continue;
        // v1 takes 0; v2 (Linux 6.12+) takes any non-empty string, 0 included.
        if (::pwrite(counter.fd, "0", 1, 0) != 1)
            return false;
        reset = true;
    }
    return reset;
}

} // namespace cmcp::jail
