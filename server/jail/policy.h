// The job policy cmcp-jail reads (JSON, from --policy-fd N or --policy FILE) and its strict parser.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cmcp::jail {

// Every layer the jail knows. The parser refuses any other name; main.cpp refuses (fails
// closed) a known layer that this build cannot apply yet.
enum class Layer { Identity, Rlimits, Cgroup, Namespaces, Landlock, Seccomp, Apparmor };

const char *layerName(Layer layer);

struct Limits
{
    std::optional<std::uint64_t> cpuSeconds; // RLIMIT_CPU (soft = n, hard = n + 1)
    std::optional<std::uint64_t> fileSizeBytes; // RLIMIT_FSIZE
    std::optional<std::uint64_t> openFiles; // RLIMIT_NOFILE
    std::optional<std::uint64_t> processes; // RLIMIT_NPROC (per host uid)
    std::optional<std::uint64_t> addressSpaceBytes; // RLIMIT_AS
};

struct Policy
{
    uid_t uid = 0;
    gid_t gid = 0;
    std::string workspace; // absolute
    std::string cwd; // relative to workspace, may be empty
    std::vector<std::pair<std::string, std::string>> env; // the complete environment of the job
    Limits limits;
    std::vector<Layer>
            layers; // requested, in the order given (the jail applies them in its own order)

    bool wants(Layer layer) const;
};

// Lowest uid/gid a policy may name: system accounts and root are refused.
inline constexpr std::uint64_t kMinId = 1000;

// Parses and validates `text`. On failure returns false and sets `error` to one line naming
// the offending key.
bool parsePolicy(const std::string &text, Policy &out, std::string &error);

// Reads the whole of `fd` (at most 1 MiB) / the file at `path`.
bool readPolicyFd(int fd, std::string &text, std::string &error);
bool readPolicyFile(const std::string &path, std::string &text, std::string &error);

} // namespace cmcp::jail
