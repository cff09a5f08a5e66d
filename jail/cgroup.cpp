// Layer: cgroups, run by the monitor (privileged, outside the job's namespaces). One cgroup per
// job, "cmcp/<name>", in every hierarchy that has something the job needs:
// - cgroup v1 (legacy and hybrid hosts): memory (limit, peak, OOM count) and cpuacct (CPU time)
//   always, for accounting; pids and cpu only when the policy limits them.
// - cgroup v2 (pure, or /sys/fs/cgroup/unified on hybrid hosts) always: cgroup.kill ends the
//   whole job in one write, and on pure v2 hosts it carries the memory, pids and cpu
//   controllers too, once enabled down the tree.
// The job's directory is created directly beneath each hierarchy's root, not beneath the
// jail's own cgroup: in v2 only the root cgroup may hold processes and hand controllers to its
// children at once, so a job beneath a service's cgroup could not get its controllers. The
// same layout is used in v1 for uniformity. Hierarchies are found in /proc/self/mountinfo, and
// which controller a job directory has is read off the interface files the kernel put in it
// (memory.max, pids.max, ...), so nothing else needs to be remembered between the calls.
//
// Fails closed: a limit the policy asks for without a writable controller for it ends the job
// before it runs. Without limits the cgroup still serves accounting and killing, and only a
// host where nothing at all could be created fails.
#include "jail/layers.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string_view>
#include <thread>

namespace cmcp::jail {

namespace {

constexpr std::string_view kParentName = "cmcp";
constexpr std::uint64_t kCpuPeriodUs = 100000; // 100 ms, the kernel's default CFS period

// The v1 controllers this layer uses; any other v1 hierarchy (cpuset, freezer, name=systemd,
// ...) is left alone.
constexpr std::string_view kUsedV1Controllers[] = {"memory", "pids", "cpu", "cpuacct"};

struct Hierarchy
{
    std::string mountPoint;
    bool unified = false; // cgroup2
    std::vector<std::string> controllers; // v1 only: the used controllers it is mounted with
};

std::vector<std::string_view> split(std::string_view text, char separator)
{
    std::vector<std::string_view> parts;
    while (true) {
        const std::size_t end = text.find(separator);
        parts.push_back(text.substr(0, end));
        if (end == std::string_view::npos)
            return parts;
        text.remove_prefix(end + 1);
    }
}

bool contains(const std::vector<std::string> &list, std::string_view item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

// mountinfo writes space, tab, newline and backslash in paths as \ooo (octal).
std::string unescapeMountPath(std::string_view field)
{
    const auto isOctal = [](char c) { return c >= '0' && c <= '7'; };
    std::string path;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() && isOctal(field[i + 1])
            && isOctal(field[i + 2]) && isOctal(field[i + 3])) {
            path += char((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8
                         + (field[i + 3] - '0'));
            i += 3;
        } else {
            path += field[i];
        }
    }
    return path;
}

// Whether a space-separated list such as cgroup.controllers ("cpu memory pids\n") has `word`.
bool listHasWord(std::string_view list, std::string_view word)
{
    for (std::string_view item : split(list, ' ')) {
        if (item.substr(0, item.find('\n')) == word)
            return true;
    }
    return false;
}

bool readWholeFile(const std::string &path, std::string &text)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    text.clear();
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
        if (n > 0)
            text.append(buffer, std::size_t(n));
    }
    const int err = errno;
    ::close(fd);
    errno = err;
    return n == 0;
}

// cgroup interface files take one value per write(); a short or failed write is an error the
// kernel explains through errno (EINVAL for a bad value, EBUSY, ...).
bool writeInterfaceFile(const std::string &path, std::string_view value, std::string &error)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        error = errnoText("open " + path, errno);
        return false;
    }
    ssize_t n;
    do {
        n = ::write(fd, value.data(), value.size());
    } while (n < 0 && errno == EINTR);
    const int err = errno;
    ::close(fd);
    if (n != ssize_t(value.size())) {
        error = errnoText("write \"" + std::string(value) + "\" to " + path, n < 0 ? err : EIO);
        return false;
    }
    return true;
}

bool fileExists(const std::string &path)
{
    return ::access(path.c_str(), F_OK) == 0;
}

std::optional<std::uint64_t> parseNumber(std::string_view text)
{
    std::uint64_t value = 0;
    std::size_t digits = 0;
    for (; digits < text.size() && text[digits] >= '0' && text[digits] <= '9'; ++digits)
        value = value * 10 + std::uint64_t(text[digits] - '0');
    if (digits == 0)
        return std::nullopt;
    return value;
}

// A file holding one number (cpuacct.usage, memory.peak, ...).
std::optional<std::uint64_t> readNumber(const std::string &path)
{
    std::string text;
    if (!readWholeFile(path, text))
        return std::nullopt;
    return parseNumber(text);
}

// A flat-keyed file ("usage_usec 1234\nuser_usec ...": cpu.stat, memory.events, ...).
std::optional<std::uint64_t> readKeyedNumber(const std::string &path, std::string_view key)
{
    std::string text;
    if (!readWholeFile(path, text))
        return std::nullopt;
    for (std::string_view line : split(text, '\n')) {
        if (line.size() > key.size() && line.substr(0, key.size()) == key
            && line[key.size()] == ' ')
            return parseNumber(line.substr(key.size() + 1));
    }
    return std::nullopt;
}

// Every cgroup2 mount and every v1 mount with a controller this layer uses, first mount of
// each only (a hierarchy can be mounted more than once; all mounts show the same cgroups).
std::vector<Hierarchy> mountedHierarchies()
{
    std::vector<Hierarchy> hierarchies;
    std::string mountinfo;
    if (!readWholeFile("/proc/self/mountinfo", mountinfo))
        return hierarchies;
    bool haveUnified = false;
    std::vector<std::string> claimed; // v1 controllers already found in an earlier mount
    for (std::string_view line : split(mountinfo, '\n')) {
        // "id parent major:minor root mount-point options [optional fields...] - fstype source
        // super-options"
        const std::vector<std::string_view> fields = split(line, ' ');
        const auto dash = std::find(fields.begin(), fields.end(), "-");
        if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4)
            continue;
        const std::string_view fsType = dash[1];
        const std::string_view superOptions = dash[3];
        Hierarchy hierarchy;
        hierarchy.mountPoint = unescapeMountPath(fields[4]);
        if (fsType == "cgroup2") {
            if (haveUnified)
                continue;
            haveUnified = true;
            hierarchy.unified = true;
        } else if (fsType == "cgroup") {
            for (std::string_view option : split(superOptions, ',')) {
                if (std::find(std::begin(kUsedV1Controllers), std::end(kUsedV1Controllers), option)
                            != std::end(kUsedV1Controllers)
                    && !contains(claimed, option))
                    hierarchy.controllers.emplace_back(option);
            }
            if (hierarchy.controllers.empty())
                continue;
            claimed.insert(claimed.end(), hierarchy.controllers.begin(),
                           hierarchy.controllers.end());
        } else {
            continue;
        }
        hierarchies.push_back(std::move(hierarchy));
    }
    return hierarchies;
}

// The v1 controllers the policy needs: memory always (limit, peak, OOM count), cpuacct for CPU
// time unless a v2 tree counts it (its cpu.stat needs no controller), pids and cpu only for
// their limits. Every hierarchy joined costs a migration, the slowest step of a jail's start.
std::vector<std::string> neededV1Controllers(const CgroupPolicy &policy, bool v2Mounted)
{
    std::vector<std::string> needed = {"memory"};
    if (!v2Mounted)
        needed.emplace_back("cpuacct");
    if (policy.pids)
        needed.emplace_back("pids");
    if (policy.cpuPercent)
        needed.emplace_back("cpu");
    return needed;
}

// The same for v2; CPU time is accounted by the core (cpu.stat) without the cpu controller.
std::vector<std::string> neededV2Controllers(const CgroupPolicy &policy)
{
    std::vector<std::string> needed = {"memory"};
    if (policy.pids)
        needed.emplace_back("pids");
    if (policy.cpuPercent)
        needed.emplace_back("cpu");
    return needed;
}

bool isRelevant(const Hierarchy &hierarchy, const std::vector<std::string> &neededV1)
{
    if (hierarchy.unified)
        return true; // cgroup.kill, and whatever controllers it has
    return std::any_of(hierarchy.controllers.begin(), hierarchy.controllers.end(),
                       [&](const std::string &c) { return contains(neededV1, c); });
}

bool makeParentDirectory(const std::string &path, std::string &error)
{
    if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST)
        return true;
    error = errnoText("mkdir " + path, errno);
    return false;
}

// A job directory that already exists is the leftover of a jail that died before cleaning up
// (names default to the jail's pid, which gets reused): removed if empty, an error if a live
// job still uses the name. Names the supervisor chooses must therefore be unique among running
// jails: an explicit name whose cgroup exists but is not entered yet would be taken over.
bool makeJobDirectory(const std::string &path, std::string &error)
{
    if (::mkdir(path.c_str(), 0755) == 0)
        return true;
    if (errno == EEXIST && ::rmdir(path.c_str()) == 0 && ::mkdir(path.c_str(), 0755) == 0)
        return true;
    const int err = errno;
    error = err == EBUSY ? path + " already exists and holds processes (name in use)"
                         : errnoText("mkdir " + path, err);
    return false;
}

// In v2 a cgroup gets a controller only if every ancestor enables it in cgroup.subtree_control:
// the root's for "cmcp", then "cmcp"'s for the job. Each controller is enabled on its own, so
// one the kernel refuses (e.g. cpu while realtime tasks run elsewhere) does not block the rest;
// a missing one only matters, and is reported, if the policy needs it.
void enableV2Controllers(const std::string &root, const std::string &parent,
                         const std::vector<std::string> &needed, std::string &notes)
{
    std::string available;
    readWholeFile(root + "/cgroup.controllers", available);
    for (const std::string &controller : needed) {
        if (!listHasWord(available, controller))
            continue; // bound to a v1 hierarchy (hybrid host) or not built
        for (const std::string &dir : {root, parent}) {
            const std::string subtreeControl = dir + "/cgroup.subtree_control";
            std::string enabled, error;
            readWholeFile(subtreeControl, enabled);
            if (!listHasWord(enabled, controller)
                && !writeInterfaceFile(subtreeControl, "+" + controller, error)) {
                notes += "; " + error;
                break;
            }
        }
    }
}

// Creates <hierarchy>/cmcp/<name>; `notes` collects why a hierarchy could not be used.
bool createJobDirectory(const Hierarchy &hierarchy, const std::string &name,
                        const CgroupPolicy &policy, std::string &dir, std::string &notes)
{
    const std::string parent = hierarchy.mountPoint + "/" + std::string(kParentName);
    std::string error;
    if (!makeParentDirectory(parent, error)) {
        notes += "; " + error;
        return false;
    }
    if (hierarchy.unified)
        enableV2Controllers(hierarchy.mountPoint, parent, neededV2Controllers(policy), notes);
    dir = parent + "/" + name;
    if (!makeJobDirectory(dir, error)) {
        notes += "; " + error;
        return false;
    }
    return true;
}

enum class LimitResult { Applied, NoController, WriteFailed };

// memory_bytes caps RAM and swap together: v1 memory.memsw.limit_in_bytes and v2
// memory.swap.max exist only with swap accounting, and without them swap cannot be charged to
// (and so cannot extend) the job anyway. v1 requires memsw >= the RAM limit, hence the order.
LimitResult limitMemory(const std::vector<std::string> &dirs, std::uint64_t bytes,
                        std::string &error)
{
    const std::string value = std::to_string(bytes);
    for (const std::string &dir : dirs) {
        if (fileExists(dir + "/memory.limit_in_bytes")) {
            if (!writeInterfaceFile(dir + "/memory.limit_in_bytes", value, error))
                return LimitResult::WriteFailed;
            if (fileExists(dir + "/memory.memsw.limit_in_bytes")
                && !writeInterfaceFile(dir + "/memory.memsw.limit_in_bytes", value, error))
                return LimitResult::WriteFailed;
            return LimitResult::Applied;
        }
        if (fileExists(dir + "/memory.max")) {
            if (!writeInterfaceFile(dir + "/memory.max", value, error))
                return LimitResult::WriteFailed;
            if (fileExists(dir + "/memory.swap.max")
                && !writeInterfaceFile(dir + "/memory.swap.max", "0", error))
                return LimitResult::WriteFailed;
            return LimitResult::Applied;
        }
    }
    return LimitResult::NoController;
}

// pids.max has the same name in v1 and v2.
LimitResult limitPids(const std::vector<std::string> &dirs, std::uint64_t pids, std::string &error)
{
    for (const std::string &dir : dirs) {
        if (fileExists(dir + "/pids.max"))
            return writeInterfaceFile(dir + "/pids.max", std::to_string(pids), error)
                    ? LimitResult::Applied
                    : LimitResult::WriteFailed;
    }
    return LimitResult::NoController;
}

// CPU bandwidth: `percent` of one CPU per period, e.g. 50 -> 50 ms every 100 ms.
LimitResult limitCpu(const std::vector<std::string> &dirs, std::uint64_t percent,
                     std::string &error)
{
    const std::string quota = std::to_string(percent * kCpuPeriodUs / 100);
    const std::string period = std::to_string(kCpuPeriodUs);
    for (const std::string &dir : dirs) {
        if (fileExists(dir + "/cpu.cfs_quota_us")) {
            const bool ok = writeInterfaceFile(dir + "/cpu.cfs_period_us", period, error)
                    && writeInterfaceFile(dir + "/cpu.cfs_quota_us", quota, error);
            return ok ? LimitResult::Applied : LimitResult::WriteFailed;
        }
        if (fileExists(dir + "/cpu.max"))
            return writeInterfaceFile(dir + "/cpu.max", quota + " " + period, error)
                    ? LimitResult::Applied
                    : LimitResult::WriteFailed;
    }
    return LimitResult::NoController;
}

// Turns a limit's result into the layer's verdict; `key` is the policy key, `controller` the
// cgroup controller that would have enforced it.
bool requireLimit(LimitResult result, const char *key, const char *controller,
                  const std::string &notes, std::string &error)
{
    if (result == LimitResult::NoController)
        error = std::string(key) + ": no writable " + controller + " cgroup controller on this host"
                + notes;
    else if (result == LimitResult::WriteFailed)
        error = std::string(key) + ": " + error;
    return result == LimitResult::Applied;
}

bool applyLimits(const CgroupPolicy &policy, const std::vector<std::string> &dirs,
                 const std::string &notes, std::string &error)
{
    if (policy.memoryBytes
        && !requireLimit(limitMemory(dirs, *policy.memoryBytes, error), "memory_bytes", "memory",
                         notes, error))
        return false;
    if (policy.pids
        && !requireLimit(limitPids(dirs, *policy.pids, error), "pids", "pids", notes, error))
        return false;
    if (policy.cpuPercent
        && !requireLimit(limitCpu(dirs, *policy.cpuPercent, error), "cpu_percent", "cpu", notes,
                         error))
        return false;
    return true;
}

std::vector<pid_t> listedProcesses(const std::string &dir)
{
    std::vector<pid_t> pids;
    std::string text;
    if (!readWholeFile(dir + "/cgroup.procs", text))
        return pids;
    for (std::string_view line : split(text, '\n')) {
        if (const auto pid = parseNumber(line); pid && *pid > 0)
            pids.push_back(pid_t(*pid));
    }
    return pids;
}

// Without cgroup.kill (v1-only hosts, kernels before 5.14) and without freezing: SIGKILL every
// listed task, again and again, until the lists stay empty. A task forked between the read and
// the kills shows up in the next round; the pids limit and the pid namespace bound how many
// there can be. Exited tasks leave the list at once (zombies are not listed), so a finished
// job ends the loop in one round. A listed task that exits before its kill frees its pid, which
// could in principle be reused by then; within one round (microseconds) that is no practical
// risk. Closing it entirely would take a pidfd per task and a check of its cgroup before each
// kill; hosts with cgroup.kill never get here.
void killListedProcesses(const std::vector<std::string> &dirs)
{
    constexpr int kMaxRounds = 100;
    constexpr auto kPause = std::chrono::milliseconds(1);
    for (int round = 0; round < kMaxRounds; ++round) {
        bool anyListed = false;
        for (const std::string &dir : dirs) {
            for (const pid_t pid : listedProcesses(dir)) {
                anyListed = true;
                ::kill(pid, SIGKILL);
            }
        }
        if (!anyListed)
            return;
        std::this_thread::sleep_for(kPause);
    }
}

} // namespace

bool createCgroup(const Policy &policy, pid_t jailPid, JobCgroup &out, std::string &error)
{
    out.dirs.clear();
    const CgroupPolicy cgroupPolicy = policy.cgroup.value_or(CgroupPolicy{});
    const std::string name =
            cgroupPolicy.name.empty() ? "job-" + std::to_string(jailPid) : cgroupPolicy.name;
    const std::vector<Hierarchy> hierarchies = mountedHierarchies();
    const bool v2Mounted = std::any_of(hierarchies.begin(), hierarchies.end(),
                                       [](const Hierarchy &h) { return h.unified; });
    const std::vector<std::string> neededV1 = neededV1Controllers(cgroupPolicy, v2Mounted);

    std::string notes; // why hierarchies could not be used, for a failure message
    for (const Hierarchy &hierarchy : hierarchies) {
        if (!isRelevant(hierarchy, neededV1)) {
            // An empty leftover of an earlier jail that had this pid and needed this controller
            // goes too: it is a job's directory nobody else would ever remove.
            ::rmdir((hierarchy.mountPoint + "/" + std::string(kParentName) + "/" + name).c_str());
            continue;
        }
        std::string dir;
        if (createJobDirectory(hierarchy, name, cgroupPolicy, dir, notes))
            out.dirs.push_back(std::move(dir));
    }
    if (out.dirs.empty()) {
        error = "no writable cgroup hierarchy"
                + (notes.empty() ? std::string(" mounted") : " (" + notes.substr(2) + ")");
        return false;
    }
    if (!notes.empty())
        notes = " (" + notes.substr(2) + ")";
    if (!applyLimits(cgroupPolicy, out.dirs, notes, error)) {
        // Nothing of a refused job may stay behind.
        removeCgroup(out);
        out.dirs.clear();
        return false;
    }
    return true;
}

bool enterCgroup(const JobCgroup &cgroup, pid_t pid, std::string &error)
{
    const std::string value = std::to_string(pid);
    for (const std::string &dir : cgroup.dirs) {
        if (!writeInterfaceFile(dir + "/cgroup.procs", value, error))
            return false;
    }
    return true;
}

void killCgroup(const JobCgroup &cgroup)
{
    // Every task of the job is in every one of its cgroups, so one cgroup.kill reaches all of
    // them, including tasks being forked while it runs.
    for (const std::string &dir : cgroup.dirs) {
        std::string error;
        if (fileExists(dir + "/cgroup.kill")
            && writeInterfaceFile(dir + "/cgroup.kill", "1", error))
            return;
    }
    killListedProcesses(cgroup.dirs);
}

bool cgroupHoldsTasks(const JobCgroup &cgroup)
{
    for (const std::string &dir : cgroup.dirs) {
        std::string text;
        if (!readWholeFile(dir + "/cgroup.procs", text))
            return true;
        for (std::string_view line : split(text, '\n')) {
            if (const auto pid = parseNumber(line); pid && *pid > 0)
                return true;
        }
    }
    return false;
}

CgroupStats cgroupStats(const JobCgroup &cgroup)
{
    CgroupStats stats;
    for (const std::string &dir : cgroup.dirs) {
        if (!stats.cpuNanoseconds) {
            if (const auto ns = readNumber(dir + "/cpuacct.usage"))
                stats.cpuNanoseconds = ns;
            else if (const auto us = readKeyedNumber(dir + "/cpu.stat", "usage_usec"))
                stats.cpuNanoseconds = *us * 1000;
        }
        if (!stats.peakMemoryBytes) {
            if (const auto bytes = readNumber(dir + "/memory.max_usage_in_bytes"))
                stats.peakMemoryBytes = bytes;
            else if (const auto peak = readNumber(dir + "/memory.peak"))
                stats.peakMemoryBytes = peak;
        }
        // v1 counts OOM kills in memory.oom_control (kernel 4.13+), v2 in memory.events.
        auto oomKills = readKeyedNumber(dir + "/memory.oom_control", "oom_kill");
        if (!oomKills)
            oomKills = readKeyedNumber(dir + "/memory.events", "oom_kill");
        if (oomKills.value_or(0) > 0)
            stats.oomKilled = true;
        // Both versions count the forks the job's pids limit refused in pids.events.
        stats.pidsRefused += readKeyedNumber(dir + "/pids.events", "max").value_or(0);
    }
    return stats;
}

void removeCgroup(const JobCgroup &cgroup)
{
    // rmdir answers EBUSY while killed tasks are still being torn down; that takes the kernel
    // a moment after their parent has reaped them, and on a busy machine a few hundred
    // milliseconds: an empty cgroup left behind is never removed by anyone else.
    constexpr auto kGiveUpAfter = std::chrono::milliseconds(2000);
    constexpr auto kPause = std::chrono::milliseconds(2);
    const auto deadline = std::chrono::steady_clock::now() + kGiveUpAfter;
    for (auto dir = cgroup.dirs.rbegin(); dir != cgroup.dirs.rend(); ++dir) {
        while (::rmdir(dir->c_str()) != 0 && errno == EBUSY
               && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(kPause);
    }
}

} // namespace cmcp::jail
