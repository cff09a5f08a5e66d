// Layer: Landlock. Filesystem rights from the policy's "landlock" object (see
// jail/protocol/Policy.h for the semantics), TCP bind/connect denied when "network" is false (ABI
// 4+), abstract Unix socket and signal scoping (ABI 6+). The handled rights and the ruleset
// attribute are sized by the ABI the kernel reports, so an older kernel gets every restriction it
// can enforce; a policy that needs more than the kernel offers (network false below ABI 4) and a
// kernel without Landlock fail closed.
//
// Runs while still root (before identity): no_new_privs is set here anyway, so
// landlock_restrict_self never depends on CAP_SYS_ADMIN. The domain is inherited across
// fork and execve and cannot be lifted.
#include "jail/layers.h"

#include <linux/landlock.h>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

// Debian 12's <linux/landlock.h> knows ABI 1-2 only: newer constants are defined here.
#ifndef __NR_landlock_create_ruleset
#  define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#  define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#  define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#  define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#  define LANDLOCK_ACCESS_FS_REFER (1ULL << 13) // ABI 2
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#  define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) // ABI 3
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#  define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) // ABI 5
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#  define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0) // ABI 4
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#  define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1) // ABI 4
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#  define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) // ABI 6
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#  define LANDLOCK_SCOPE_SIGNAL (1ULL << 1) // ABI 6
#endif

namespace cmcp::jail {

namespace {

// struct landlock_ruleset_attr as of ABI 6. The header's version may lack the last two
// fields, so the jail uses its own layout and passes the size the kernel's ABI knows.
struct RulesetAttr
{
    std::uint64_t handledAccessFs;
    std::uint64_t handledAccessNet; // ABI 4
    std::uint64_t scoped; // ABI 6
};
constexpr std::size_t kAttrSizeAbi1 = sizeof(std::uint64_t);
constexpr std::size_t kAttrSizeAbi4 = 2 * sizeof(std::uint64_t);
constexpr std::size_t kAttrSizeAbi6 = sizeof(RulesetAttr);

// The header's own definition is packed (12 bytes); redefined so it does not depend on it.
struct __attribute__((packed)) PathBeneathAttr
{
    std::uint64_t allowedAccess;
    std::int32_t parentFd;
};
static_assert(sizeof(PathBeneathAttr) == 12);
constexpr int kRulePathBeneath = 1;

constexpr std::uint64_t kFsAbi1 = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE
        | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR
        | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR
        | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK
        | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK
        | LANDLOCK_ACCESS_FS_MAKE_SYM;

// Rights that mean something on a file that is not a directory (the kernel refuses others).
constexpr std::uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE
        | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV;

constexpr std::uint64_t kRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr std::uint64_t kExecute = kRead | LANDLOCK_ACCESS_FS_EXECUTE;
// MAKE_CHAR, MAKE_BLOCK and IOCTL_DEV are handled and never granted.
constexpr std::uint64_t kWrite = kRead | LANDLOCK_ACCESS_FS_WRITE_FILE
        | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE
        | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK
        | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER
        | LANDLOCK_ACCESS_FS_TRUNCATE;

class Fd
{
public:
    explicit Fd(int fd) : fd_(fd) { }
    ~Fd()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

// One path-beneath rule for an open descriptor; `path` names it in errors.
bool addFdRule(int ruleset, int fd, const std::string &path, std::uint64_t access,
               std::string &error)
{
    struct stat st
    {
    };
    if (::fstat(fd, &st) != 0) {
        error = errnoText("fstat " + path, errno);
        return false;
    }
    if (!S_ISDIR(st.st_mode))
        access &= kFileRights;
    if (access == 0)
        return true;
    PathBeneathAttr attr{access, fd};
    if (::syscall(__NR_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0) != 0) {
        error = errnoText("landlock_add_rule " + path, errno);
        return false;
    }
    return true;
}

// One path-beneath rule. A path that does not exist is skipped (no rule grants less, never
// more) unless `mustExist`; any other failure to open it fails the layer.
bool addPathRule(int ruleset, const std::string &path, std::uint64_t access, bool mustExist,
                 std::string &error)
{
    Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT && !mustExist)
            return true;
        error = errnoText("open " + path, errno);
        return false;
    }
    return addFdRule(ruleset, fd.get(), path, access, error);
}

} // namespace

int landlockAbi()
{
    long abi = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? -errno : static_cast<int>(abi);
}

bool applyLandlock(const Policy &policy, const Launch &launch, std::string &error)
{
    if (!policy.landlock) {
        error = "no \"landlock\" object in the policy";
        return false;
    }
    const LandlockPolicy &ll = *policy.landlock;

    int abi = landlockAbi();
    if (abi < 0) {
        int err = -abi;
        if (err == ENOSYS || err == EOPNOTSUPP)
            error = errnoText("not available in this kernel (landlock_create_ruleset)", err);
        else
            error = errnoText("landlock_create_ruleset(VERSION)", err);
        return false;
    }
    if (abi < 1) {
        error = "kernel reports Landlock ABI " + std::to_string(abi);
        return false;
    }

    RulesetAttr attr{};
    std::size_t attrSize = kAttrSizeAbi1;
    attr.handledAccessFs = kFsAbi1;
    if (abi >= 2)
        attr.handledAccessFs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        attr.handledAccessFs |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        attr.handledAccessFs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    if (abi >= 4) {
        attrSize = kAttrSizeAbi4;
        // Handled and no net rule added: every TCP bind and connect is refused.
        if (!ll.network)
            attr.handledAccessNet = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
    } else if (!ll.network) {
        error = "network: false needs Landlock ABI 4 (TCP bind/connect), the kernel has ABI "
                + std::to_string(abi);
        return false;
    }
    if (abi >= 6) {
        attrSize = kAttrSizeAbi6;
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
    }

    Fd ruleset(static_cast<int>(::syscall(__NR_landlock_create_ruleset, &attr, attrSize, 0)));
    if (ruleset.get() < 0) {
        error = errnoText("landlock_create_ruleset (ABI " + std::to_string(abi) + ")", errno);
        return false;
    }

    const std::uint64_t handled = attr.handledAccessFs;
    for (const std::string &p : ll.read)
        if (!addPathRule(ruleset.get(), p, kRead & handled, false, error))
            return false;
    for (const std::string &p : ll.execute)
        if (!addPathRule(ruleset.get(), p, kExecute & handled, false, error))
            return false;
    for (const std::string &p : ll.write)
        if (!addPathRule(ruleset.get(), p, kWrite & handled, false, error))
            return false;
    // Inside the minimal root by its path there; on the host's root through the descriptor the
    // job holds (the directories above it may be closed to the job's uid).
    if (policy.namespaces) {
        if (!addPathRule(ruleset.get(), policy.jobWorkspace(), kWrite & handled, true, error))
            return false;
    } else if (launch.workspaceFd < 0) {
        error = workspaceError(policy, launch);
        return false;
    } else if (!addFdRule(ruleset.get(), launch.workspaceFd, policy.workspace, kWrite & handled,
                          error)) {
        return false;
    }
    // A program held from the host (namespaces.program_from_host) lives outside the minimal
    // root, where no path of the policy can name it: exactly that file may be executed.
    if (policy.namespaces && policy.namespaces->programFromHost && launch.programFd >= 0
        && !addFdRule(ruleset.get(), launch.programFd, "the program held from the host",
                      kExecute & handled, error))
        return false;
    // The jail's own /proc/<pid> (resolved now, so not its children's): the identity layer,
    // which runs after this one, verifies itself through /proc/self/status.
    if (!addPathRule(ruleset.get(), "/proc/self", kRead & handled, false, error))
        return false;

    // Idempotent; the identity layer sets it again.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        error = errnoText("prctl(PR_SET_NO_NEW_PRIVS)", errno);
        return false;
    }
    if (::syscall(__NR_landlock_restrict_self, ruleset.get(), 0) != 0) {
        error = errnoText("landlock_restrict_self", errno);
        return false;
    }
    return true;
}

} // namespace cmcp::jail
