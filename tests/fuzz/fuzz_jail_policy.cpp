// The jail's policy parser (jail/protocol/Policy.cpp): any bytes as the policy cmcp-jail reads on
// --policy-fd. A refusal has a message of one line and leaves the caller's Policy as it was; an
// accepted policy holds every promise of Policy.h (ids, clean paths, a layer's object exactly when
// the layer is requested, the bounds) and parses the same way again.
#include "FuzzSupport.h"
#include "jail/protocol/Policy.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace cmcp::jail;

namespace {

bool cleanAbsolute(const std::string &path)
{
    if (path.empty() || path[0] != '/' || path.find('\0') != std::string::npos)
        return false;
    if (path.size() > 1 && path.back() == '/')
        return false;
    for (std::size_t i = 1; i <= path.size();) {
        const std::size_t end = std::min(path.find('/', i), path.size());
        const std::string part = path.substr(i, end - i);
        if (part.empty() && path.size() > 1)
            return false;
        if (part == "." || part == "..")
            return false;
        i = end + 1;
    }
    return true;
}

// Empty (the workspace itself), or what would be clean beneath "/".
bool cleanRelative(const std::string &path)
{
    return path.empty() || (path[0] != '/' && cleanAbsolute("/" + path));
}

bool beneathOrEqual(const std::string &path, const std::string &dir)
{
    return dir == "/" || path == dir
            || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0
                && path[dir.size()] == '/');
}

bool allowedName(const std::string &name, const char *extra)
{
    for (const char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr(extra, c))
            return false;
    return true;
}

void checkAccepted(const Policy &p)
{
    FUZZ_CHECK(p.uid >= kMinId && p.uid <= 0xFFFFFFFDu);
    FUZZ_CHECK(p.gid >= kMinId && p.gid <= 0xFFFFFFFDu);
    FUZZ_CHECK(cleanAbsolute(p.workspace) && p.workspace != "/");
    FUZZ_CHECK(cleanRelative(p.cwd));
    for (const auto &[name, value] : p.env) {
        FUZZ_CHECK(!name.empty() && name.find('=') == std::string::npos);
        FUZZ_CHECK(name.find('\0') == std::string::npos && value.find('\0') == std::string::npos);
    }

    // The identity layer always; every layer once.
    FUZZ_CHECK(p.wants(Layer::Identity));
    std::set<Layer> layers(p.layers.begin(), p.layers.end());
    FUZZ_CHECK(layers.size() == p.layers.size());
    FUZZ_CHECK(std::string(layerName(Layer::Identity)) == "identity");

    // Limits only with the rlimits layer, within their bounds.
    const Limits &l = p.limits;
    if (l.cpuSeconds || l.fileSizeBytes || l.openFiles || l.processes || l.addressSpaceBytes)
        FUZZ_CHECK(p.wants(Layer::Rlimits));
    if (l.cpuSeconds)
        FUZZ_CHECK(*l.cpuSeconds >= 1 && *l.cpuSeconds <= (1u << 30));
    for (const auto &limit : {l.fileSizeBytes, l.openFiles, l.processes, l.addressSpaceBytes})
        if (limit)
            FUZZ_CHECK(*limit >= 1 && *limit <= (std::uint64_t(1) << 62));

    // A layer's settings exactly when the layer is requested.
    FUZZ_CHECK(bool(p.landlock) == p.wants(Layer::Landlock));
    FUZZ_CHECK(bool(p.namespaces) == p.wants(Layer::Namespaces));
    FUZZ_CHECK(bool(p.cgroup) == p.wants(Layer::Cgroup));
    FUZZ_CHECK(bool(p.apparmor) == p.wants(Layer::Apparmor));
    if (!p.wants(Layer::Seccomp))
        FUZZ_CHECK(!p.seccomp.network);

    if (p.namespaces) {
        const NamespacesPolicy &n = *p.namespaces;
        FUZZ_CHECK(!n.hostname.empty() && n.hostname.size() <= 63 && allowedName(n.hostname, "-"));
        FUZZ_CHECK(cleanAbsolute(n.workspaceAt) && n.workspaceAt != "/");
        for (const char *system :
             {"/usr", "/etc", "/dev", "/proc", "/tmp", "/lib", "/lib64", "/bin", "/sbin"})
            FUZZ_CHECK(!beneathOrEqual(n.workspaceAt, system));
        FUZZ_CHECK(n.tmpSizeMb >= 1 && n.tmpSizeMb <= 4096);
        FUZZ_CHECK(p.jobWorkspace() == n.workspaceAt);
        std::set<std::string> names;
        FUZZ_CHECK(n.bin.size() <= 256);
        for (const std::string &program : n.bin) {
            FUZZ_CHECK(cleanAbsolute(program) && program != "/usr"
                       && beneathOrEqual(program, "/usr"));
            FUZZ_CHECK(names.insert(program.substr(program.rfind('/') + 1)).second);
        }
        if (n.execPaths) {
            FUZZ_CHECK(n.execPaths->size() <= 256);
            for (const std::string &path : *n.execPaths)
                FUZZ_CHECK(cleanAbsolute(path) && path != "/usr" && beneathOrEqual(path, "/usr"));
        }
    } else {
        FUZZ_CHECK(p.jobWorkspace() == p.workspace);
    }

    if (p.landlock) {
        const LandlockPolicy &ll = *p.landlock;
        for (const auto *list : {&ll.read, &ll.execute, &ll.write}) {
            FUZZ_CHECK(list->size() <= 256);
            for (const std::string &path : *list)
                FUZZ_CHECK(cleanAbsolute(path));
        }
        // A job must not run programs it wrote: no execute path at, beneath or above a write
        // path or the job's workspace.
        std::vector<std::string> writable = ll.write;
        writable.push_back(p.jobWorkspace());
        for (const std::string &x : ll.execute)
            for (const std::string &w : writable)
                FUZZ_CHECK(!beneathOrEqual(x, w) && !beneathOrEqual(w, x));
    }

    if (p.cgroup) {
        const CgroupPolicy &c = *p.cgroup;
        if (c.memoryBytes)
            FUZZ_CHECK(*c.memoryBytes >= (1u << 20) && *c.memoryBytes <= (std::uint64_t(1) << 50));
        if (c.pids)
            FUZZ_CHECK(*c.pids >= 1 && *c.pids <= 4194304);
        if (c.cpuPercent)
            FUZZ_CHECK(*c.cpuPercent >= 1 && *c.cpuPercent <= 100000);
        if (!c.name.empty())
            FUZZ_CHECK(c.name.size() <= 64 && c.name != "." && c.name != ".."
                       && allowedName(c.name, "_.-"));
    }
    if (p.apparmor)
        FUZZ_CHECK(!p.apparmor->profile.empty() && p.apparmor->profile.size() <= 128
                   && allowedName(p.apparmor->profile, "_.-"));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    Policy policy;
    policy.uid = 4242;
    policy.workspace = "/untouched";
    std::string error;
    if (!parsePolicy(text, policy, error)) {
        // One line, whatever the policy holds: what a message quotes from it is escaped.
        FUZZ_CHECK(!error.empty());
        FUZZ_CHECK(error.find('\n') == std::string::npos);
        FUZZ_CHECK(std::none_of(error.begin(), error.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
        }));
        FUZZ_CHECK(policy.uid == 4242 && policy.workspace == "/untouched" && policy.layers.empty());
        return 0;
    }
    checkAccepted(policy);
    // Deterministic: the same text gives the same policy.
    Policy again;
    std::string againError;
    FUZZ_CHECK(parsePolicy(text, again, againError));
    FUZZ_CHECK(again.uid == policy.uid && again.gid == policy.gid
               && again.workspace == policy.workspace && again.cwd == policy.cwd
               && again.env == policy.env && again.layers == policy.layers);
    return 0;
}
