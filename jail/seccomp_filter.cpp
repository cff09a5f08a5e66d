// The job's seccomp filter. Allow by default, deny explicitly:
//   EPERM   ptrace, process_vm_readv/writev; the mount family (mount, umount2, pivot_root,
//           chroot, move_mount, open_tree, fsopen, fsconfig, fsmount, fspick, mount_setattr);
//           unshare, setns; clone with any CLONE_NEW* flag; bpf, perf_event_open; keyctl,
//           add_key, request_key; io_uring_setup/enter/register; userfaultfd;
//           open_by_handle_at, name_to_handle_at; kexec_load, kexec_file_load; init_module,
//           finit_module, delete_module; reboot, swapon, swapoff, acct, quotactl,
//           quotactl_fd; settimeofday, clock_settime, clock_adjtime, adjtimex; iopl, ioperm.
//           (personality is not restricted: "anything but 0 and the query 0xffffffff" needs two
//           comparisons on one argument, which libseccomp 2.5 refuses.)
//           ioctl creating a btrfs subvolume or snapshot (a subvolume made inside a workspace
//           would be a qgroup of its own, outside the workspace's quota).
//           A mode with the set-user-ID bit, given to chmod, fchmod, fchmodat, fchmodat2, creat,
//           mknod, mknodat, or to open and openat creating a file: a job owns its workspace's
//           files (the workspace uid, through an idmapped mount), and a set-user-ID file of
//           that uid would, run on the host, act as the owner of every workspace.
//   ENOSYS  clone3 (its flags live in memory the filter cannot read: libc falls back to clone);
//           openat2 (its mode, too, lives in memory: libc's open never uses it, and callers
//           that try it first fall back to openat)
//   EAFNOSUPPORT  socket() for any family but AF_UNIX, when the network is off.
//   kill    any syscall of a foreign ABI: i386 (int 0x80) and x32 are not in the filter's
//           architecture list, and the bad-architecture action kills the whole process.
// With FilterOptions::notify every denial above but clone3's (and not the kill) is a user
// notification instead: the monitor answers it with the same errno (deniedErrno) and counts it.
#include "jail/layers.h"
#include "jail/seccomp_filter.h"

#include <seccomp.h>

#include <linux/btrfs.h>
#include <linux/sched.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace cmcp::jail {

namespace {

struct CtxDeleter
{
    void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxDeleter>;

std::string libError(const std::string &what, int rc)
{
    return what + ": " + std::strerror(-rc);
}

constexpr const char *kDenyEperm[] = {
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "mount",
        "umount2",
        "pivot_root",
        "chroot",
        "move_mount",
        "open_tree",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "mount_setattr",
        "unshare",
        "setns",
        "bpf",
        "perf_event_open",
        "keyctl",
        "add_key",
        "request_key",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "userfaultfd",
        "open_by_handle_at",
        "name_to_handle_at",
        "kexec_load",
        "kexec_file_load",
        "init_module",
        "finit_module",
        "delete_module",
        "reboot",
        "swapon",
        "swapoff",
        "acct",
        "quotactl",
        "quotactl_fd",
        "settimeofday",
        "clock_settime",
        "clock_adjtime",
        "adjtimex",
        "iopl",
        "ioperm",
};

// clone(2) flags that create a namespace. CLONE_NEWTIME (0x80) is not among them: in clone's
// flags those bits are the exit signal, and the kernel accepts CLONE_NEWTIME only from
// clone3 and unshare, both refused outright.
constexpr scmp_datum_t kCloneNamespaceFlags[] = {
        CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
        CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
};

// fchmodat2 on x86_64 (Linux 6.6), which libseccomp 2.5 cannot name.
constexpr int kFchmodat2 = 452;

int resolve(const char *name, std::string &error)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        error = std::string("libseccomp does not know the syscall ") + name;
    return nr;
}

bool exportBpf(scmp_filter_ctx ctx, std::vector<sock_filter> &out, std::string &error)
{
    int fd = ::memfd_create("cmcp-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        error = std::string("memfd_create: ") + std::strerror(errno);
        return false;
    }
    std::string bytes;
    int rc = seccomp_export_bpf(ctx, fd);
    if (rc < 0) {
        error = libError("seccomp_export_bpf", rc);
    } else if (::lseek(fd, 0, SEEK_SET) != 0) {
        error = std::string("lseek on the BPF memfd: ") + std::strerror(errno);
    } else {
        char buf[4096];
        for (;;) {
            ssize_t n = ::read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                error = std::string("reading the BPF memfd: ") + std::strerror(errno);
                break;
            }
            if (n == 0)
                break;
            bytes.append(buf, static_cast<std::size_t>(n));
        }
    }
    ::close(fd);
    if (!error.empty())
        return false;
    if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0
        || bytes.size() / sizeof(sock_filter) > BPF_MAXINSNS) {
        error = "seccomp_export_bpf produced " + std::to_string(bytes.size())
                + " bytes, not a valid BPF program";
        return false;
    }
    out.resize(bytes.size() / sizeof(sock_filter));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return true;
}

} // namespace

int deniedErrno(long syscallNumber)
{
    if (syscallNumber == SYS_clone3 || syscallNumber == SYS_openat2)
        return ENOSYS;
    if (syscallNumber == SYS_socket)
        return EAFNOSUPPORT;
    return EPERM;
}

std::optional<std::vector<sock_filter>> buildJobFilter(const FilterOptions &options,
                                                       std::string &error)
{
    Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
    if (!ctx) {
        error = "seccomp_init failed";
        return std::nullopt;
    }
    // Only the native architecture is in the filter (seccomp_init adds exactly that one;
    // on x86_64 libseccomp also sends x32 numbers to the bad-arch action). Anything else
    // (int 0x80 into the i386 table, x32) kills the whole process.
    if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
        error = "only x86_64 is supported";
        return std::nullopt;
    }
    int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (rc < 0) {
        error = libError("setting the bad-architecture action", rc);
        return std::nullopt;
    }
    // The jail sets no_new_privs itself (identity layer) and loads with prctl.
    if ((rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0)) < 0) {
        error = libError("clearing SCMP_FLTATR_CTL_NNP", rc);
        return std::nullopt;
    }

    // Every rule denies: with the errno deniedErrno gives, or (notify) through the monitor,
    // which answers with that same errno. clone3 always fails at once: its ENOSYS is libc's cue
    // to fall back to clone (every new thread and posix_spawn asks it), not a refusal worth
    // counting; the clone it falls back to is judged, and counted, by its flags.
    auto addNumber = [&](const char *name, int nr, unsigned count, const scmp_arg_cmp *cmps) {
        const uint32_t action = options.notify && nr != SYS_clone3 && nr != SYS_openat2
                ? SCMP_ACT_NOTIFY
                : SCMP_ACT_ERRNO(unsigned(deniedErrno(nr)));
        int r = seccomp_rule_add_array(ctx.get(), action, nr, count, cmps);
        if (r < 0) {
            error = libError(std::string("adding the rule for ") + name, r);
            return false;
        }
        return true;
    };
    auto add = [&](const char *name, unsigned count, const scmp_arg_cmp *cmps) {
        int nr = resolve(name, error);
        return nr != __NR_SCMP_ERROR && addNumber(name, nr, count, cmps);
    };

    for (const char *name : kDenyEperm)
        if (!add(name, 0, nullptr))
            return std::nullopt;

    if (!add("clone3", 0, nullptr))
        return std::nullopt;

    // x86_64: clone(flags, newsp, parent_tid, child_tid, tls): flags are argument 0.
    for (scmp_datum_t flag : kCloneNamespaceFlags) {
        scmp_arg_cmp cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag);
        if (!add("clone", 1, &cmp))
            return std::nullopt;
    }

    // ioctl(fd, request, ...): the kernel reads the request as 32 bits, so only those are
    // compared (garbage in the upper half does not slip past).
    for (scmp_datum_t request : {BTRFS_IOC_SUBVOL_CREATE, BTRFS_IOC_SUBVOL_CREATE_V2,
                                 BTRFS_IOC_SNAP_CREATE, BTRFS_IOC_SNAP_CREATE_V2}) {
        scmp_arg_cmp cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, request);
        if (!add("ioctl", 1, &cmp))
            return std::nullopt;
    }

    // The set-user-ID bit in a mode argument (the header says why). x86_64 numbers the mode
    // argument of each as listed; fchmodat2 is newer than this libseccomp's table.
    struct ModeArgument
    {
        const char *name;
        unsigned index;
    };
    const scmp_datum_t setUid = S_ISUID;
    for (const ModeArgument call :
         {ModeArgument{"chmod", 1}, ModeArgument{"fchmod", 1}, ModeArgument{"fchmodat", 2},
          ModeArgument{"creat", 1}, ModeArgument{"mknod", 1}, ModeArgument{"mknodat", 2}}) {
        const scmp_arg_cmp cmp{call.index, SCMP_CMP_MASKED_EQ, setUid, setUid};
        if (!add(call.name, 1, &cmp))
            return std::nullopt;
    }
    {
        const scmp_arg_cmp cmp{2, SCMP_CMP_MASKED_EQ, setUid, setUid};
        if (!addNumber("fchmodat2", kFchmodat2, 1, &cmp))
            return std::nullopt;
    }
    for (const scmp_datum_t creating : {scmp_datum_t(O_CREAT), scmp_datum_t(__O_TMPFILE)}) {
        const scmp_arg_cmp open[] = {{1, SCMP_CMP_MASKED_EQ, creating, creating},
                                     {2, SCMP_CMP_MASKED_EQ, setUid, setUid}};
        const scmp_arg_cmp openat[] = {{2, SCMP_CMP_MASKED_EQ, creating, creating},
                                       {3, SCMP_CMP_MASKED_EQ, setUid, setUid}};
        if (!add("open", 2, open) || !add("openat", 2, openat))
            return std::nullopt;
    }
    if (!add("openat2", 0, nullptr))
        return std::nullopt;

    if (!options.network) {
        // The family is an int: a value with garbage in the upper half is "not AF_UNIX" to
        // the filter and refused, whatever the kernel would have made of it.
        scmp_arg_cmp cmp = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
        if (!add("socket", 1, &cmp))
            return std::nullopt;
    }

    std::vector<sock_filter> program;
    if (!exportBpf(ctx.get(), program, error))
        return std::nullopt;
    return program;
}

bool buildSeccomp(const Policy &policy, bool countDenials, SeccompProgram &out, std::string &error)
{
    FilterOptions options;
    options.network = policy.seccomp.network;
    // A kernel without user notifications (before 5.0) keeps the plain errno filter: the job
    // is refused the same, only nobody counts it.
    options.notify = countDenials && seccompUserNotifAvailable();
    std::string why;
    auto program = buildJobFilter(options, why);
    if (!program) {
        error = "building the filter: " + why;
        return false;
    }
    out.code = std::move(*program);
    out.notifies = options.notify;
    return true;
}

} // namespace cmcp::jail
