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

// "landlock": {"read": [...], "execute": [...], "write": [...], "network": false}
// Required when the "landlock" layer is requested, refused otherwise. Every key is optional;
// paths are absolute, without "." or ".." components, at most 256 per list. Access that is not
// granted here is denied (everything Landlock can handle at the kernel's ABI is handled):
// - read: read files and list directories beneath each path (a file: read that file).
// - execute: read plus execve beneath each path; a file entry allows exactly that program.
//   Dynamically linked programs also need their ELF interpreter (e.g. /usr/lib/x86_64-linux-gnu/
//   ld-linux-x86-64.so.2) in "execute": the kernel opens it for execution. Shared libraries
//   need only "read". Known gap: an allowed ELF interpreter runs ANY readable program
//   ("ld-linux-x86-64.so.2 /usr/bin/ls"): Landlock does not check mmap(PROT_EXEC). The per-file
//   allow-list holds only together with a mount layer that makes non-allowed programs
//   unreadable or noexec (noexec mounts refuse PROT_EXEC mappings).
// - write: read plus create/remove/rename/link/truncate/write beneath each path, never
//   execute. The workspace is always read+write. An "execute" path may not be equal to,
//   beneath, or above a "write" path or the workspace: a job must not run programs it wrote.
// - Never granted anywhere: creating device nodes, device ioctls (ABI 5+), TCP bind/connect
//   when network is false (ABI 4+), and (ABI 6+, always) signals to and abstract Unix sockets
//   of processes outside the job's Landlock domain, even ones running as the same uid.
// - network (default false): false denies every TCP bind and connect; needs ABI 4, below it
//   the layer fails closed. true leaves TCP to the other layers.
// - A path that does not exist is skipped. Implicit: the jail's own /proc/<pid> is readable
//   (the identity layer verifies itself through /proc/self/status); its children's are not
//   unless "/proc" is in "read".
struct LandlockPolicy
{
    std::vector<std::string> read, execute, write;
    bool network = false;
};

// "seccomp": {"network": false}. Optional (the defaults apply when the "seccomp" layer is
// requested without it), refused without that layer; no other key.
// - network (default false): false makes socket() fail (EAFNOSUPPORT) for every family but
//   AF_UNIX.
struct SeccompPolicy
{
    bool network = false;
};

struct Policy
{
    uid_t uid = 0;
    gid_t gid = 0;
    std::string workspace; // absolute
    std::string cwd; // relative to workspace, may be empty
    std::vector<std::pair<std::string, std::string>> env; // the complete environment of the job
    Limits limits;
    SeccompPolicy seccomp; // used iff the "seccomp" layer is requested
    std::optional<LandlockPolicy> landlock; // set iff the "landlock" layer is requested
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
