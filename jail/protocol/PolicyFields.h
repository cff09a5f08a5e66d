// The names of the job policy cmcp-jail reads (Policy.h says what each does), spelled only by
// the policy's one parser (Policy.cpp) and its one writer (PolicyJson.cpp), which the daemon
// sends through: the two sides cannot spell a key differently.
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace cmcp::jail_protocol::policy {

// --- the policy object -------------------------------------------------------------------------
inline constexpr const char *kUid = "uid";
inline constexpr const char *kGid = "gid";
inline constexpr const char *kWorkspace = "workspace";
inline constexpr const char *kCwd = "cwd";
inline constexpr const char *kEnv = "env"; // its keys are the job's variable names
inline constexpr const char *kLimits = "limits";
inline constexpr const char *kLayers = "layers";
// One object per layer, under the layer's own name.
inline constexpr const char *kLandlock = "landlock";
inline constexpr const char *kSeccomp = "seccomp";
inline constexpr const char *kNamespaces = "namespaces";
inline constexpr const char *kCgroup = "cgroup";
inline constexpr const char *kApparmor = "apparmor";

// --- the names of "layers" ---------------------------------------------------------------------
inline constexpr const char *kLayerIdentity = "identity";
inline constexpr const char *kLayerRlimits = "rlimits";
inline constexpr const char *kLayerCgroup = kCgroup;
inline constexpr const char *kLayerNamespaces = kNamespaces;
inline constexpr const char *kLayerLandlock = kLandlock;
inline constexpr const char *kLayerSeccomp = kSeccomp;
inline constexpr const char *kLayerApparmor = kApparmor;

// --- "limits" ----------------------------------------------------------------------------------
inline constexpr const char *kCpuSeconds = "cpu_seconds";
inline constexpr const char *kFileSizeBytes = "file_size_bytes";
inline constexpr const char *kOpenFiles = "open_files";
inline constexpr const char *kProcesses = "processes";
inline constexpr const char *kAddressSpaceBytes = "address_space_bytes";

// --- "landlock" (and "network" in "seccomp" and "namespaces") ----------------------------------
inline constexpr const char *kRead = "read";
inline constexpr const char *kExecute = "execute";
inline constexpr const char *kWrite = "write";
inline constexpr const char *kNetwork = "network";

// --- "namespaces" ------------------------------------------------------------------------------
inline constexpr const char *kEgressPort = "egress_port";
inline constexpr const char *kHostname = "hostname";
inline constexpr const char *kWorkspaceAt = "workspace_at";
inline constexpr const char *kTmpSizeMb = "tmp_size_mb";
inline constexpr const char *kExecPaths = "exec_paths";
inline constexpr const char *kBin = "bin";
inline constexpr const char *kProgramFromHost = "program_from_host";

// --- "cgroup" ----------------------------------------------------------------------------------
inline constexpr const char *kMemoryBytes = "memory_bytes";
inline constexpr const char *kPids = "pids";
inline constexpr const char *kCpuPercent = "cpu_percent";
inline constexpr const char *kName = "name";

// --- "apparmor" --------------------------------------------------------------------------------
inline constexpr const char *kProfile = "profile";

// --- every key the jail knows, object by object ------------------------------------------------
inline constexpr std::array kPolicyKeys = {kUid,     kGid,        kWorkspace, kCwd,
                                           kEnv,     kLimits,     kLayers,    kLandlock,
                                           kSeccomp, kNamespaces, kCgroup,    kApparmor};
inline constexpr std::array kLayerNames = {kLayerIdentity,   kLayerRlimits,  kLayerCgroup,
                                           kLayerNamespaces, kLayerLandlock, kLayerSeccomp,
                                           kLayerApparmor};
inline constexpr std::array kLimitsKeys = {kCpuSeconds, kFileSizeBytes, kOpenFiles, kProcesses,
                                           kAddressSpaceBytes};
inline constexpr std::array kLandlockKeys = {kRead, kExecute, kWrite, kNetwork};
inline constexpr std::array kSeccompKeys = {kNetwork};
inline constexpr std::array kNamespacesKeys = {kNetwork,     kEgressPort,     kHostname,
                                               kWorkspaceAt, kTmpSizeMb,      kExecPaths,
                                               kBin,         kProgramFromHost};
inline constexpr std::array kCgroupKeys = {kMemoryBytes, kPids, kCpuPercent, kName};
inline constexpr std::array kApparmorKeys = {kProfile};

inline bool isOneOf(std::span<const char *const> names, std::string_view name)
{
    for (const char *known : names)
        if (name == known)
            return true;
    return false;
}

// The keys an object of the policy may hold: the policy itself for an empty `object`, a layer's
// or "limits" by its key. Empty for anything else, and for "env", whose keys are the job's
// variables and not the jail's.
inline std::span<const char *const> keysOf(std::string_view object)
{
    if (object.empty())
        return kPolicyKeys;
    if (object == kLimits)
        return kLimitsKeys;
    if (object == kLandlock)
        return kLandlockKeys;
    if (object == kSeccomp)
        return kSeccompKeys;
    if (object == kNamespaces)
        return kNamespacesKeys;
    if (object == kCgroup)
        return kCgroupKeys;
    if (object == kApparmor)
        return kApparmorKeys;
    return {};
}

} // namespace cmcp::jail_protocol::policy
