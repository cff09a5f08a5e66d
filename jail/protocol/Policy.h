// The job policy cmcp-jail reads (JSON, from --policy-fd N or --policy FILE) and its strict parser.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cmcp::jail {

// Every layer the jail knows. The parser refuses any other name. main.cpp applies each layer
// the policy lists (the monitor places the job in its cgroup), and one this machine cannot
// apply ends the job, failing closed, before any of its code runs.
enum class Layer { Identity, Rlimits, Cgroup, Namespaces, Landlock, Seccomp, Apparmor };

const char *layerName(Layer layer);
// The layer of that name; nullopt for a name the jail does not know.
std::optional<Layer> layerNamed(std::string_view name);

struct Limits
{
    std::optional<std::uint64_t> cpuSeconds; // RLIMIT_CPU (soft = n, hard = n + 1)
    std::optional<std::uint64_t> fileSizeBytes; // RLIMIT_FSIZE
    std::optional<std::uint64_t> openFiles; // RLIMIT_NOFILE
    std::optional<std::uint64_t> processes; // RLIMIT_NPROC (per host uid)
    std::optional<std::uint64_t> addressSpaceBytes; // RLIMIT_AS
    bool operator==(const Limits &) const = default;
};

// "landlock": {"read": [...], "execute": [...], "write": [...], "network": false}
// Required when the "landlock" layer is requested, refused otherwise. Every key is optional;
// paths are absolute and clean (no "//", "." or ".." component, no trailing "/"), at most 256
// per list. Access that is not granted here is denied (everything Landlock can handle at the
// kernel's ABI is handled):
// - read: read files and list directories beneath each path (a file: read that file).
// - execute: read plus execve beneath each path; a file entry allows exactly that program.
//   Dynamically linked programs also need their ELF interpreter (e.g. /usr/lib/x86_64-linux-gnu/
//   ld-linux-x86-64.so.2) in "execute": the kernel opens it for execution. Shared libraries
//   need only "read". Known gap: an allowed ELF interpreter runs ANY readable program
//   ("ld-linux-x86-64.so.2 /usr/bin/ls"): Landlock does not check mmap(PROT_EXEC). The per-file
//   allow-list holds together with the namespaces layer's "exec_paths", which mounts every
//   other program noexec (noexec mounts refuse PROT_EXEC mappings too).
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
    bool operator==(const LandlockPolicy &) const = default;
};

// "seccomp": {"network": false}. Optional (the defaults apply when the "seccomp" layer is
// requested without it), refused without that layer; no other key.
// - network (default false): false makes socket() fail (EAFNOSUPPORT) for every family but
//   AF_UNIX.
struct SeccompPolicy
{
    bool network = false;
    bool operator==(const SeccompPolicy &) const = default;
};

// "namespaces": {"network": false, "hostname": "sandbox", "workspace_at": "/workspace",
//                "tmp_size_mb": 64, "exec_paths": [...]}. Required when the "namespaces" layer is
// requested, refused otherwise; every key optional. The job runs as uid/gid kInsideId inside a
// new user namespace that maps only that id (to the policy's host uid/gid), in new mount, pid,
// ipc and uts namespaces, with a minimal root (see namespaces.cpp):
// - network (default false): false adds a network namespace with only loopback; true shares
//   the host's network (the other layers still decide what a socket may do).
// - egress_port (1..65535, only with network false, needs --egress-fd): the job's one way out.
//   Before any of its code runs the jail listens on 127.0.0.1:egress_port in the job's network
//   namespace and hands that listening socket to the supervisor over --egress-fd (SCM_RIGHTS),
//   keeping no copy: every connection the job makes to it is accepted by the supervisor (the
//   daemon's egress gate), outside the job. The TLS roots are then visible in /etc.
// - workspace_at: where the workspace appears inside (absolute, clean, not /, not below /usr,
//   /etc, /dev, /proc or /tmp). Landlock rules and "cwd" then speak of that path.
// - tmp_size_mb (1..4096, default 64): size of the job's private /tmp.
// - exec_paths: when present, /usr is mounted noexec except these paths (files or directories
//   beneath /usr), so neither execve nor an ELF loader can map any other program executable.
//   Absent: /usr keeps exec (Landlock alone decides what execve may start). Name files where
//   it matters: a directory given for shared libraries (e.g. /usr/lib/x86_64-linux-gnu) lets
//   the ELF loader start any program beneath it (Debian ships a few dozen helpers there).
// - bin: programs (absolute paths beneath /usr, distinct names, at most 256) linked into
//   kBinDirectory by their names, so a PATH of that directory alone finds exactly them.
// - program_from_host (default false): the program, given by its absolute host path, is held
//   by a descriptor before the minimal root is built and executed through it, so a program that
//   lives outside /usr (the browser worker of a build tree) starts inside the minimal root
//   without anything else of its directory being visible there. With the landlock layer,
//   exactly that file may be executed (its ELF loader must still be in "execute").
// Where the namespaces layer's "bin" links are.
inline constexpr const char *kBinDirectory = "/cmcp/bin";

struct NamespacesPolicy
{
    bool network = false;
    std::optional<std::uint16_t> egressPort;
    std::string hostname = "sandbox";
    std::string workspaceAt = "/workspace";
    std::uint64_t tmpSizeMb = 64;
    std::optional<std::vector<std::string>> execPaths;
    std::vector<std::string> bin;
    bool programFromHost = false;
    bool operator==(const NamespacesPolicy &) const = default;
};

// The uid and gid a job has inside its user namespace.
inline constexpr unsigned kInsideId = 1000;

// "cgroup": {"memory_bytes": N, "pids": N, "cpu_percent": N, "name": "..."}. Required when the
// "cgroup" layer is requested, refused otherwise; every key optional. A cgroup per job under
// "cmcp/" in every writable hierarchy that has the controller (v1 memory/pids/cpu, cpuacct for
// accounting; v2 for cgroup.kill and v2 controllers when present):
// - memory_bytes (>= 1 MiB): memory limit, swap included (no swap use above it); the kernel
//   OOM-kills inside the job when it is reached, whatever address space was reserved.
// - pids (1..4194304): tasks in the job at once.
// - cpu_percent (1..100000): CPU bandwidth, 100 = one full core.
// - name: [A-Za-z0-9_.-], 1..64 characters, default "job-<pid of the jail>".
struct CgroupPolicy
{
    std::optional<std::uint64_t> memoryBytes;
    std::optional<std::uint64_t> pids;
    std::optional<std::uint64_t> cpuPercent;
    std::string name;
    bool operator==(const CgroupPolicy &) const = default;
};

// "apparmor": {"profile": "cmcp-job-bash"}. Required iff the "apparmor" layer is requested:
// the job execs under that profile (aa_change_onexec), which must be loaded.
struct ApparmorPolicy
{
    std::string profile;
    bool operator==(const ApparmorPolicy &) const = default;
};

struct Policy
{
    uid_t uid = 0;
    gid_t gid = 0;
    std::string workspace; // absolute and clean, like every path of a policy
    std::string cwd; // relative to workspace and clean, may be empty
    std::vector<std::pair<std::string, std::string>> env; // the complete environment of the job
    Limits limits;
    SeccompPolicy seccomp; // used iff the "seccomp" layer is requested
    std::optional<LandlockPolicy> landlock; // set iff the "landlock" layer is requested
    std::optional<NamespacesPolicy> namespaces; // set iff the "namespaces" layer is requested
    std::optional<CgroupPolicy> cgroup; // set iff the "cgroup" layer is requested
    std::optional<ApparmorPolicy> apparmor; // set iff the "apparmor" layer is requested
    std::vector<Layer>
            layers; // requested, in the order given (the jail applies them in its own order)

    bool wants(Layer layer) const;
    // Sets `name` in env, replacing its value where it is already there.
    void setEnv(const std::string &name, const std::string &value);
    // The value of `name` in env; nullptr when it is not set.
    const std::string *envValue(std::string_view name) const;
    // The workspace as the job sees it: namespaces->workspaceAt with the namespaces layer,
    // else the host path.
    const std::string &jobWorkspace() const;
    bool operator==(const Policy &) const = default;
};

// Lowest uid/gid a policy may name: system accounts and root are refused.
inline constexpr std::uint64_t kMinId = 1000;

// Parses and validates `text`. On failure returns false and sets `error` to one line naming
// the offending key and, quoted, the offending value (control characters escaped, cut after 200
// bytes).
bool parsePolicy(const std::string &text, Policy &out, std::string &error);

// The policy as the JSON parsePolicy reads: the one writer of the jail's keys, for the daemon,
// which refuses whatever parsePolicy would refuse before it starts a jail. A field at its
// default is written all the same, except those the parser would refuse to see: "uid" and "gid"
// when 0 (not chosen yet), "cwd" and the cgroup's "name" when empty, "seccomp" without its
// layer, and "program_from_host" when false.
std::string policyJson(const Policy &policy);

// Reads the whole of `fd` (at most 1 MiB) / the file at `path`.
bool readPolicyFd(int fd, std::string &text, std::string &error);
bool readPolicyFile(const std::string &path, std::string &text, std::string &error);

} // namespace cmcp::jail
