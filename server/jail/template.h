// Templates: one jail built ahead for many calls, each call a fork of it with isolation of its
// own. Three processes of cmcp-jail take part, plus one per call:
//
//   cmcp-jail --serve-template SOCKET --template-uids FIRST:COUNT --policy-fd N -- PROGRAM
//     The template's monitor (host root, outside every namespace). It clones the template into
//     the policy's namespaces as for a job, but with a user namespace whose uid map covers the
//     whole pool (FIRST..FIRST+COUNT-1, each uid mapped to itself) and the policy's gid, and
//     places it in a cgroup of its own. Once the template says it is ready it listens on SOCKET
//     (mode 0600, root only; a peer that is not root is refused). It keeps a few helpers armed,
//     each with a call process made ahead: the helper creates the call's cgroup, has the
//     template fork a shepherd, which clones the call process, and moves that process into the
//     cgroup (the slow step on cgroup v1, off the call's path). An armed helper then takes the
//     next connection and serves that call (armAndServe); the monitor arms another.
//
//   The template (inside the jail). It runs as the policy's uid with the capabilities of its
//     own user namespace (CAP_SETUID, CAP_SYS_ADMIN there, none on the host), in the minimal
//     root, and never execs: it only receives a call's descriptors on its control socket and
//     forks. It is not dumpable, and every call runs as another uid in a pid namespace below,
//     where the template's pid does not exist: a call cannot signal, ptrace or read it.
//
//   The call's shepherd (a fork of the template, the call process's parent). It clones the call
//     process into new user, mount, pid and ipc namespaces (and a network namespace when the
//     policy has no network) before the call is known; when it comes (its policy checked by
//     the helper to be the template's but for uid and result descriptor), it writes that user
//     namespace's maps (uid/gid kInsideId -> the call's pool uid and the pool gid: the call
//     holds no other id of the pool), hands the call over, waits for the call process and tells
//     the helper how it ended.
//
//   The call process, pid 1 of its own pid namespace, in the call's own cgroup (the policy's
//     limits, accounting and kill) before any code of the call. It waits for the call, then
//     switches to uid kInsideId, mounts a fresh /proc
//     (its own pid namespace only), a fresh /tmp and /dev/shm, forbids further user
//     namespaces, brings loopback up, enters a cgroup namespace of its
//     cgroup, applies AppArmor, Landlock (a domain of its own: signals and abstract sockets of
//     other calls and of the template are out of reach), drops every capability, sets
//     no_new_privs, verifies, loads seccomp and execs with exactly the policy's environment.
//
//   cmcp-jail --via-template SOCKET --policy-fd N --report-fd M [--pass-fd P] -- PROGRAM ...
//     The daemon's job process for a call (runViaTemplate): it sends its policy, arguments,
//     standard descriptors and --pass-fd to the template, turns the helper's answers into the
//     usual report records and exit status, and asks the helper to kill the call on SIGTERM
//     (the time limit, a cancel). When no template answers, or it does not take the call (another
//     policy, a failure before the call could run), it returns and the caller builds the jail
//     cold, as without a template.
//
// A call's end: the helper kills everything left in the call's cgroup (a call that ended on its
// own leaves nothing: its pid namespace went with its init; the lists are checked and killed
// only when not empty), reads its CPU time and peak memory, reports, then removes the cgroup.
// The shepherd holds the call's mount namespace until it has reported, so that the unmount of
// the call's tree (an RCU grace period) is paid after the result, not in the call's exit. A
// template that dies takes its calls' processes with it (its pid namespace), and their helpers
// report them killed.
#pragma once

#include "jail/layers.h"

#include <sys/types.h>

#include <string>

namespace cmcp::jail {

struct TemplateOptions
{
    std::string socketPath;
    uid_t uidFirst = 0; // the pool a call's uid must come from
    uid_t uidCount = 0;
};

// template_monitor.cpp. Never returns: exits when the template ends or on SIGTERM (after the
// calls in flight have been killed and reported).
[[noreturn]] void runTemplateMonitor(const Policy &policy, const std::string &policyText,
                                     const SeccompProgram &seccomp, const TemplateOptions &options,
                                     char **argv);

// template_client.cpp. Exits with the call's status when the template ran it; returns when it
// did not, before any of the call's code ran.
void runViaTemplate(const std::string &socketPath, const Policy &policy,
                    const std::string &policyText, char **argv, int passFd);

// template_zygote.cpp, in the template process after the monitor cloned it and wrote its id
// maps: becomes the template and serves calls from `controlFd` until the monitor goes.
[[noreturn]] void runTemplateProcess(const Policy &policy, const SeccompProgram &seccomp,
                                     Launch launch, int controlFd, int failureFd);

// The policy with what may differ between a template's calls taken out (uid, gid, the result
// descriptor's number in the environment, the cgroup's name): two calls with the same text may
// share a template. Empty when the text is not JSON.
std::string comparablePolicy(const std::string &policyText);

// What the helper and the template say to each other and to the client.
namespace template_protocol {
// Client -> helper, first: this header, then policyBytes and argvBytes (NUL-terminated
// arguments); the descriptors stdin, stdout, stderr and the --pass-fd (if any) ride on the
// header.
struct Request
{
    std::uint32_t policyBytes = 0;
    std::uint32_t argvBytes = 0;
    std::int32_t passFd = -1; // the number the call must have it at
};
// Helper -> template: "a" (arm) with the call socket riding on it: fork a shepherd for a call
// to come. Helper -> shepherd, once the call has come: this header, with the request's memfd
// (policy, then argv), stdin, stdout, stderr and the pass descriptor riding on it; the shepherd
// hands the same on to the call process.
struct Fork
{
    std::int32_t passFd = -1;
    std::uint32_t policyBytes = 0;
    std::uint32_t argvBytes = 0;
    std::uint32_t uid = 0; // the call's, checked by the helper against the pool
    std::uint32_t gid = 0;
};
// Shepherd -> helper on the call socket: 'c' with SCM_CREDENTIALS naming the call process
// (the helper places it in the call's cgroup and answers 'p'), then, once the call ran,
// 's' (started), 'f' + "<layer>\n<message>" (failed before exec; its status follows),
// 'x' + int status (ended).
// Helper -> client, one line each: "S <pid>", "R <code>\t<layer>\t<message>",
// "E <exit|-> <signal|-> <wall_ms> <cpu_ms> <peak_kb|-> <oom 0|1> <killed 0|1>",
// "U <reason>" (not taken: start cold). Client -> helper: 'k' (kill the call).
} // namespace template_protocol

} // namespace cmcp::jail
