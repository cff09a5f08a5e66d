// Layer: identity. The job must never run as host uid 0 and must keep no privilege:
//   securebits locked (no root magic, no keep-caps, no ambient raise), bounding and ambient
//   sets emptied while CAP_SETPCAP is still held, no supplementary groups, real/effective/saved
//   gid and uid switched to the job's, the parent-death signal (after the switch: changing
//   credentials clears it) with a check that the monitor did not die meanwhile. Later, once the
//   mount work that needs the user namespace's capabilities is done (sealIdentity): every
//   capability set zeroed, no_new_privs, the result verified from /proc/self/status and by
//   setuid(0) failing, a new session, and every descriptor above 2 closed on exec.
#include "jail/layers.h"

#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/securebits.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace cmcp::jail {

namespace {

// A small /proc file, whole, into `buffer`: a template's call runs this in a fork of its cell,
// where every page written is a fault, and a heap allocation of this size would first
// consolidate the interpreter's free chunks (touching their pages); iostreams would build a
// locale.
using ProcText = char[8192];
bool readProcFile(const char *path, ProcText &buffer, std::string_view &text)
{
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    std::size_t size = 0;
    ssize_t n;
    while (size < sizeof buffer - 1
           && (n = ::read(fd, buffer + size, sizeof buffer - 1 - size)) > 0)
        size += std::size_t(n);
    const int err = errno;
    ::close(fd);
    errno = err;
    buffer[size] = '\0';
    text = std::string_view(buffer, size);
    return size > 0;
}

int lastCap()
{
    ProcText buffer;
    std::string_view text;
    const int n =
            readProcFile("/proc/sys/kernel/cap_last_cap", buffer, text) ? std::atoi(buffer) : -1;
    if (n > 0 && n < 64)
        return n;
    return 63; // unknown: try them all, EINVAL past the end is tolerated below
}

bool zeroCapSets(std::string &error)
{
    __user_cap_header_struct header{};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    header.pid = 0;
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capset, &header, data) != 0) {
        error = errnoText("capset(0, 0, 0)", errno);
        return false;
    }
    return true;
}

// The value of the "Name:\tvalue" field `name` of /proc/self/status text; empty when missing.
std::string_view field(std::string_view status, std::string_view name)
{
    std::size_t at = 0;
    while ((at = status.find(name, at)) != std::string_view::npos) {
        const bool lineStart = at == 0 || status[at - 1] == '\n';
        at += name.size();
        if (lineStart && at < status.size() && status[at] == ':')
            break;
    }
    if (at == std::string_view::npos)
        return {};
    std::string_view value = status.substr(at + 1);
    value = value.substr(0, value.find('\n'));
    const std::size_t begin = value.find_first_not_of(" \t");
    return begin == std::string_view::npos ? std::string_view() : value.substr(begin);
}

// The ids the job has as it sees them: kInsideId inside its user namespace (mapped to the
// policy's host ids), else the policy's host ids themselves.
uid_t jobUid(const Policy &policy)
{
    return policy.namespaces ? kInsideId : policy.uid;
}
gid_t jobGid(const Policy &policy)
{
    return policy.namespaces ? kInsideId : policy.gid;
}

// "deny" in /proc/self/setgroups: this user namespace was made by an unprivileged jail.
bool setgroupsDenied()
{
    ProcText buffer;
    std::string_view state;
    return readProcFile("/proc/self/setgroups", buffer, state) && state.substr(0, 4) == "deny";
}

// Whether every supplementary group (if any) is `gid`.
bool onlyGroupIs(gid_t gid)
{
    gid_t groups[64];
    const int n = ::getgroups(64, groups);
    if (n < 0)
        return false;
    for (int i = 0; i < n; ++i) {
        if (groups[i] != gid)
            return false;
    }
    return true;
}

bool verify(const Policy &policy, std::string &error)
{
    uid_t r, e, s;
    gid_t gr, ge, gs;
    if (::getresuid(&r, &e, &s) != 0 || ::getresgid(&gr, &ge, &gs) != 0) {
        error = errnoText("getresuid/getresgid", errno);
        return false;
    }
    const uid_t uid = jobUid(policy);
    const gid_t gid = jobGid(policy);
    if (r != uid || e != uid || s != uid || gr != gid || ge != gid || gs != gid) {
        error = "verify: real/effective/saved ids are not the policy's";
        return false;
    }
    if (r == 0 || e == 0 || s == 0) { // belt and braces: the parser refuses uid 0 already
        error = "verify: the job would run as uid 0";
        return false;
    }
    if (!onlyGroupIs(gid)) {
        error = "verify: supplementary groups other than the job's gid remain";
        return false;
    }
    ProcText buffer;
    std::string_view status;
    if (!readProcFile("/proc/self/status", buffer, status)) {
        error = errnoText("reading /proc/self/status", errno);
        return false;
    }
    for (const char *cap : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
        const std::string_view v = field(status, cap);
        if (v.empty() || v.find_first_not_of('0') != std::string_view::npos) {
            error = std::string("verify: ") + cap + " is "
                    + (v.empty() ? std::string("missing") : std::string(v)) + ", not zero";
            return false;
        }
    }
    if (field(status, "NoNewPrivs") != "1") {
        error = "verify: NoNewPrivs is not 1";
        return false;
    }
    // The decisive test: becoming root again must be impossible.
    if (::setuid(0) == 0 || ::setgid(0) == 0 || ::setgroups(0, nullptr) == 0) {
        error = "verify: regaining root (setuid/setgid/setgroups) succeeded";
        return false;
    }
    return true;
}

// After the parent-death signal is set: if the monitor is already gone, nobody would bound the
// job. The monitor holds the only write end of `aliveFd`; hang-up means it died.
bool monitorAlive(int aliveFd)
{
    pollfd p{aliveFd, POLLIN, 0};
    int n = ::poll(&p, 1, 0);
    return n == 0 || (n > 0 && !(p.revents & (POLLHUP | POLLERR)));
}

} // namespace

bool switchIdentity(const Policy &policy, const Launch &launch, std::string &error)
{
    // Host root, or the owner of a fresh user namespace: either may (and must) shed privilege.
    const bool privileged = ::geteuid() == 0 || policy.namespaces;

    if (privileged) {
        // Lock out every path back to privilege that the uid switch alone would leave:
        // NOROOT (uid 0 gains no caps on exec), no keep-caps, no ambient raise. Needs CAP_SETPCAP.
        const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS_LOCKED
                | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) {
            error = errnoText("prctl(PR_SET_SECUREBITS)", errno);
            return false;
        }
    }
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
        error = errnoText("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", errno);
        return false;
    }
    // The bounding set, while CAP_SETPCAP is still held (the uid switch takes it away on the
    // host; in a user namespace it only stops exec from ever granting anything back).
    const int last = lastCap();
    for (int cap = 0; cap <= last; ++cap) {
        if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) <= 0)
            continue; // not in the set / unknown
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
            error = errnoText("prctl(PR_CAPBSET_DROP, " + std::to_string(cap) + ")", errno);
            return false;
        }
    }

    if (::setgroups(0, nullptr) != 0) {
        // An unprivileged jail that already has no supplementary groups is fine, also in the
        // user namespace of a jail that is not host root (a daemon in a container): there the
        // kernel required setgroups to be denied before the id maps were written, and the only
        // group that may remain is the job's own gid (container engines list the primary group
        // as a supplementary one too).
        int err = errno;
        if ((privileged && !setgroupsDenied()) || !onlyGroupIs(jobGid(policy))) {
            error = errnoText("setgroups(0)", err);
            return false;
        }
    }
    const gid_t gid = jobGid(policy);
    const uid_t uid = jobUid(policy);
    if (::setresgid(gid, gid, gid) != 0) {
        error = errnoText("setresgid(" + std::to_string(gid) + ")", errno);
        return false;
    }
    if (::setresuid(uid, uid, uid) != 0) {
        error = errnoText("setresuid(" + std::to_string(uid) + ")", errno);
        return false;
    }
    // Set after the credential change (which clears it).
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
        error = errnoText("prctl(PR_SET_PDEATHSIG)", errno);
        return false;
    }
    if (!monitorAlive(launch.monitorAliveFd)) {
        error = "the monitor died before the parent-death signal was set";
        return false;
    }
    return true;
}

bool sealIdentity(const Policy &policy, std::string &error)
{
    // Permitted and effective went with the uid switch on the host; inside a user namespace
    // they go here, with the inheritable set.
    if (!zeroCapSets(error))
        return false;
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        error = errnoText("prctl(PR_SET_NO_NEW_PRIVS)", errno);
        return false;
    }
    if (!verify(policy, error))
        return false;

    // A session of its own: no controlling terminal, and the supervisor can signal the group.
    if (::setsid() < 0) {
        int err = errno;
        // Already a session leader (started through setsid(1)) is the state we want anyway.
        if (::getsid(0) != ::getpid()) {
            error = errnoText("setsid", err);
            return false;
        }
    }
    // Nothing of the monitor's descriptors reaches the job: everything above 2 closes on exec
    // (the pipe to the monitor must stay usable until then, to report a failed exec).
    if (::close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
        error = errnoText("close_range(CLOEXEC)", errno);
        return false;
    }
    return true;
}

} // namespace cmcp::jail
