// The one writer of the policy parsePolicy reads (Policy.cpp): the daemon builds a Policy and
// sends what this writes, so that both sides share the structure and the keys, not just the
// names.
#include "jail/protocol/Policy.h"

#include "jail/protocol/PolicyFields.h"

#include <nlohmann/json.hpp>

namespace cmcp::jail {

namespace {

using json = nlohmann::json;
namespace field = cmcp::jail_protocol::policy;

template<typename T>
void putIfSet(json &object, const char *key, const std::optional<T> &value)
{
    if (value)
        object[key] = *value;
}

json limitsJson(const Limits &limits)
{
    json object = json::object();
    putIfSet(object, field::kCpuSeconds, limits.cpuSeconds);
    putIfSet(object, field::kFileSizeBytes, limits.fileSizeBytes);
    putIfSet(object, field::kOpenFiles, limits.openFiles);
    putIfSet(object, field::kProcesses, limits.processes);
    putIfSet(object, field::kAddressSpaceBytes, limits.addressSpaceBytes);
    return object;
}

json namespacesJson(const NamespacesPolicy &namespaces)
{
    json object = {{field::kNetwork, namespaces.network},
                   {field::kHostname, namespaces.hostname},
                   {field::kWorkspaceAt, namespaces.workspaceAt},
                   {field::kTmpSizeMb, namespaces.tmpSizeMb}};
    putIfSet(object, field::kEgressPort, namespaces.egressPort);
    putIfSet(object, field::kExecPaths, namespaces.execPaths);
    if (!namespaces.bin.empty())
        object[field::kBin] = namespaces.bin;
    if (namespaces.programFromHost)
        object[field::kProgramFromHost] = true;
    return object;
}

json cgroupJson(const CgroupPolicy &cgroup)
{
    json object = json::object();
    putIfSet(object, field::kMemoryBytes, cgroup.memoryBytes);
    putIfSet(object, field::kPids, cgroup.pids);
    putIfSet(object, field::kCpuPercent, cgroup.cpuPercent);
    if (!cgroup.name.empty())
        object[field::kName] = cgroup.name;
    return object;
}

} // namespace

std::string policyJson(const Policy &policy)
{
    json environment = json::object();
    for (const auto &[name, value] : policy.env)
        environment[name] = value;
    json layers = json::array();
    for (Layer layer : policy.layers)
        layers.push_back(layerName(layer));
    json object = {{field::kWorkspace, policy.workspace},
                   {field::kEnv, std::move(environment)},
                   {field::kLayers, std::move(layers)}};
    if (policy.uid != 0)
        object[field::kUid] = policy.uid;
    if (policy.gid != 0)
        object[field::kGid] = policy.gid;
    if (!policy.cwd.empty())
        object[field::kCwd] = policy.cwd;
    // A layer's object only with its layer: the jail refuses it otherwise.
    if (policy.wants(Layer::Rlimits))
        object[field::kLimits] = limitsJson(policy.limits);
    if (policy.wants(Layer::Seccomp))
        object[field::kSeccomp] = {{field::kNetwork, policy.seccomp.network}};
    if (policy.landlock)
        object[field::kLandlock] = {{field::kRead, policy.landlock->read},
                                    {field::kExecute, policy.landlock->execute},
                                    {field::kWrite, policy.landlock->write},
                                    {field::kNetwork, policy.landlock->network}};
    if (policy.namespaces)
        object[field::kNamespaces] = namespacesJson(*policy.namespaces);
    if (policy.cgroup)
        object[field::kCgroup] = cgroupJson(*policy.cgroup);
    if (policy.apparmor)
        object[field::kApparmor] = {{field::kProfile, policy.apparmor->profile}};
    // Replace invalid UTF-8 rather than throw: parsePolicy then refuses what was meant.
    return object.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace cmcp::jail
