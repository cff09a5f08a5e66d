// Layer: namespaces and filesystem. The monitor clones the job into new user, mount, pid, ipc,
// uts (and, unless the policy shares the host's network, net) namespaces and maps the job's one
// id; the job then builds its minimal root on a small tmpfs and pivots into it:
//   /usr                 the host's, read-only, nosuid, nodev (noexec but for exec_paths)
//   /bin /sbin /lib*     the host's links into /usr (or read-only binds where they are dirs)
//   /etc                 a curated few host files (dynamic linker cache, alternatives, time
//                        zone, name-service switch) and a synthetic passwd/group/hosts
//   /dev                 null zero full random urandom, fd links, a small /dev/shm; no tty
//   /proc                a fresh procfs of the job's own pid namespace
//   /tmp                 a private tmpfs of tmp_size_mb, noexec
//   <workspace_at>       the workspace, the only writable bind, noexec
//   /cmcp/bin            links to the policy's "bin" programs (a PATH of exactly those)
// Everything but /tmp, /dev/shm and the workspace is read-only afterwards, the root included.
#include "jail/layers.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <string>

namespace cmcp::jail {

namespace {

// Where the new root is assembled before pivot_root. Mounting over the host's /tmp is private
// to the job's mount namespace; sources beneath /tmp (a workspace there) are reached through a
// descriptor opened before.
constexpr const char *kStage = "/tmp";

bool createFile(const std::string &path, const std::string &text, std::string &error)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        error = errnoText("creating " + path, errno);
        return false;
    }
    ssize_t n = ::write(fd, text.data(), text.size());
    int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(text.size())) {
        error = errnoText("writing " + path, n < 0 ? err : EIO);
        return false;
    }
    return true;
}

bool makeDirs(const std::string &path, std::string &error)
{
    for (std::size_t at = 1; at <= path.size(); ++at) {
        if (at != path.size() && path[at] != '/')
            continue;
        std::string part = path.substr(0, at);
        if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
            error = errnoText("mkdir " + part, errno);
            return false;
        }
    }
    return true;
}

bool mountOrFail(const char *source, const std::string &target, const char *type,
                 unsigned long flags, const char *data, std::string &error)
{
    if (::mount(source, target.c_str(), type, flags, data) != 0) {
        error = errnoText(std::string("mount ")
                                  + (type             ? type
                                             : source ? source
                                                      : "")
                                  + " on " + target,
                          errno);
        return false;
    }
    return true;
}

// Sets mount attributes on the mount at `path` (and, with `recursive`, its submounts) without
// touching the ones the kernel locked when the mount was made in a less privileged namespace.
bool setAttributes(const std::string &path, std::uint64_t set, bool recursive, std::string &error)
{
    mount_attr attr{};
    attr.attr_set = set;
    if (::mount_setattr(AT_FDCWD, path.c_str(), recursive ? AT_RECURSIVE : 0, &attr, sizeof attr)
        != 0) {
        error = errnoText("mount_setattr " + path, errno);
        return false;
    }
    return true;
}

// A read-only bind of host `source` (file or directory) at `target` in the stage.
bool bindReadOnly(const std::string &source, const std::string &target, bool exec,
                  std::string &error)
{
    if (!mountOrFail(source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr, error))
        return false;
    std::uint64_t attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (!exec)
        attrs |= MOUNT_ATTR_NOEXEC;
    return setAttributes(target, attrs, true, error);
}

bool exists(const std::string &path, struct stat &st)
{
    return ::lstat(path.c_str(), &st) == 0;
}

// A mount point for `source` inside the stage: an empty file or directory of the same kind.
bool makeMountPoint(const std::string &target, bool directory, std::string &error)
{
    if (directory)
        return makeDirs(target, error);
    return createFile(target, "", error);
}

// /usr, and /bin /sbin /lib /lib32 /lib64 /libx32 as the host has them: links (merged /usr) are
// copied as links, directories bound read-only.
bool populateSystem(const Policy &policy, const std::string &root, std::string &error)
{
    const bool restrictExec = policy.namespaces->execPaths.has_value();
    if (!makeDirs(root + "/usr", error)
        || !bindReadOnly("/usr", root + "/usr", !restrictExec, error))
        return false;
    if (restrictExec)
        for (const std::string &path : *policy.namespaces->execPaths) {
            struct stat st
            {
            };
            if (!exists(path, st))
                continue; // like Landlock: a path that does not exist grants nothing
            // The mount point exists already: it is the same path in the read-only /usr bind.
            if (!bindReadOnly(path, root + path, true, error))
                return false;
        }
    for (const char *name : {"bin", "sbin", "lib", "lib32", "lib64", "libx32"}) {
        const std::string host = std::string("/") + name;
        struct stat st
        {
        };
        if (!exists(host, st))
            continue;
        if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t n = ::readlink(host.c_str(), target, sizeof target - 1);
            if (n < 0) {
                error = errnoText("readlink " + host, errno);
                return false;
            }
            target[n] = '\0';
            if (::symlink(target, (root + host).c_str()) != 0) {
                error = errnoText("symlink " + root + host, errno);
                return false;
            }
        } else if (S_ISDIR(st.st_mode)) {
            if (!makeDirs(root + host, error)
                || !bindReadOnly(host, root + host, !restrictExec, error))
                return false;
        }
    }
    return true;
}

// /etc: only what programs need to start and to name things; nothing secret, nothing about the
// host's users. Host files are bound read-only; identities are synthetic.
bool populateEtc(const Policy &policy, const std::string &root, std::string &error)
{
    const std::string etc = root + "/etc";
    if (!makeDirs(etc, error))
        return false;
    auto bindFromHost = [&](std::initializer_list<const char *> names) {
        for (const char *name : names) {
            const std::string host = std::string("/etc/") + name;
            struct stat st
            {
            };
            if (::stat(host.c_str(), &st) != 0)
                continue; // not on this host: nothing to hide or show
            if (!makeMountPoint(etc + "/" + name, S_ISDIR(st.st_mode), error)
                || !bindReadOnly(host, etc + "/" + name, false, error))
                return false;
        }
        return true;
    };
    if (!bindFromHost({"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
                       "timezone", "nsswitch.conf", "protocols", "services", "mime.types",
                       "fonts"}))
        return false;
    // TLS roots only matter to a job that may reach the network; name resolution only to one
    // on the host's network (through the egress gate, the gate resolves names).
    if ((policy.namespaces->network || policy.namespaces->egressPort)
        && !bindFromHost({"ssl", "ca-certificates"}))
        return false;
    if (policy.namespaces->network && !bindFromHost({"resolv.conf", "gai.conf"}))
        return false;
    const std::string id = std::to_string(kInsideId);
    const std::string &home = policy.namespaces->workspaceAt;
    const std::string &host = policy.namespaces->hostname;
    return createFile(etc + "/passwd",
                      "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                      "sandbox:x:"
                              + id + ":" + id + ":sandbox:" + home
                              + ":/bin/sh\n"
                                "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
                      error)
            && createFile(etc + "/group", "root:x:0:\nsandbox:x:" + id + ":\nnogroup:x:65534:\n",
                          error)
            && createFile(etc + "/hostname", host + "\n", error)
            && createFile(etc + "/hosts",
                          "127.0.0.1\tlocalhost " + host + "\n::1\tlocalhost ip6-localhost\n",
                          error);
}

// The "bin" links: kBinDirectory/<name> -> the program, so PATH can name exactly these.
bool populateBin(const Policy &policy, const std::string &root, std::string &error)
{
    const std::string dir = root + kBinDirectory;
    if (!makeDirs(dir, error))
        return false;
    for (const std::string &program : policy.namespaces->bin) {
        const std::string link = dir + program.substr(program.rfind('/'));
        if (::symlink(program.c_str(), link.c_str()) != 0) {
            error = errnoText("symlink " + link, errno);
            return false;
        }
    }
    return true;
}

bool populateDev(const std::string &root, std::string &error)
{
    const std::string dev = root + "/dev";
    if (!makeDirs(dev, error)
        || !mountOrFail("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755", error))
        return false;
    // A user namespace cannot create device nodes: bind the host's harmless ones.
    for (const char *name : {"null", "zero", "full", "random", "urandom"}) {
        const std::string target = dev + "/" + name;
        if (!createFile(target, "", error)
            || !mountOrFail((std::string("/dev/") + name).c_str(), target, nullptr, MS_BIND,
                            nullptr, error)
            || !setAttributes(target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false, error))
            return false;
    }
    const std::pair<const char *, const char *> links[] = {{"/proc/self/fd", "fd"},
                                                           {"/proc/self/fd/0", "stdin"},
                                                           {"/proc/self/fd/1", "stdout"},
                                                           {"/proc/self/fd/2", "stderr"}};
    for (const auto &[target, name] : links)
        if (::symlink(target, (dev + "/" + name).c_str()) != 0) {
            error = errnoText("symlink " + dev + "/" + name, errno);
            return false;
        }
    const std::string shm = dev + "/shm";
    return makeDirs(shm, error)
            && mountOrFail("tmpfs", shm, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                           "size=16m,mode=1777", error)
            && setAttributes(dev, MOUNT_ATTR_RDONLY, false, error);
}

// Loopback up in the job's own network namespace (it starts down).
bool loopbackUp(std::string &error)
{
    int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        error = errnoText("socket for loopback", errno);
        return false;
    }
    ifreq req{};
    std::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
    bool ok = ::ioctl(s, SIOCGIFFLAGS, &req) == 0;
    if (ok) {
        req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP | IFF_RUNNING);
        ok = ::ioctl(s, SIOCSIFFLAGS, &req) == 0;
    }
    int err = errno;
    ::close(s);
    if (!ok)
        error = errnoText("bringing loopback up", err);
    return ok;
}

} // namespace

bool attachWorkspaceView(int viewFd, const std::string &target, std::string &error)
{
    if (::syscall(SYS_move_mount, viewFd, "", AT_FDCWD, target.c_str(), MOVE_MOUNT_F_EMPTY_PATH)
        != 0) {
        error = errnoText("attaching the workspace's idmapped view at " + target, errno);
        return false;
    }
    return true;
}

namespace {

// The workspace at `target`: the supervisor's idmapped view of it when there is one, else a
// bind of the workspace as it is on disk.
bool mountWorkspace(const Launch &launch, const std::string &source, const std::string &target,
                    std::string &error)
{
    if (launch.workspaceViewFd >= 0)
        return attachWorkspaceView(launch.workspaceViewFd, target, error);
    return mountOrFail(source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr, error);
}

} // namespace

bool limitNestedUserNamespaces(const std::string &proc, unsigned count, std::string &error)
{
    return createFile(proc + "/sys/user/max_user_namespaces", std::to_string(count), error);
}

int cloneFlags(const Policy &policy)
{
    int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    if (!policy.namespaces->network)
        flags |= CLONE_NEWNET;
    return flags;
}

bool writeIdMaps(const Policy &policy, pid_t pid, std::string &error)
{
    const std::string proc = "/proc/" + std::to_string(pid);
    const bool root = ::geteuid() == 0;
    // Host root may map any id and leaves setgroups allowed, so the job can drop the
    // supplementary groups it inherited (root's) before the switch. Anyone else maps only
    // themselves, and must deny setgroups first (the kernel requires it).
    uid_t uid = policy.uid;
    gid_t gid = policy.gid;
    if (!root) {
        if (policy.uid != ::geteuid() || policy.gid != ::getegid()) {
            error = "an unprivileged jail can only map its own uid/gid ("
                    + std::to_string(::geteuid()) + "/" + std::to_string(::getegid())
                    + "), not the policy's " + std::to_string(policy.uid) + "/"
                    + std::to_string(policy.gid);
            return false;
        }
        if (!createFile(proc + "/setgroups", "deny", error))
            return false;
    }
    return writeIdMap(pid, kInsideId, uid, 1, kInsideId, gid, error);
}

bool writeIdMap(pid_t pid, uid_t insideUid, uid_t outsideUid, uid_t uidCount, gid_t insideGid,
                gid_t outsideGid, std::string &error)
{
    const std::string proc = "/proc/" + std::to_string(pid);
    return createFile(proc + "/uid_map",
                      std::to_string(insideUid) + " " + std::to_string(outsideUid) + " "
                              + std::to_string(uidCount) + "\n",
                      error)
            && createFile(proc + "/gid_map",
                          std::to_string(insideGid) + " " + std::to_string(outsideGid) + " 1\n",
                          error);
}

bool enterCellNamespaces(const Policy &policy, std::string &error)
{
    const NamespacesPolicy &ns = *policy.namespaces;
    const std::string tmpOptions = "size=" + std::to_string(ns.tmpSizeMb) + "m,mode=1777";
    constexpr unsigned long kScratch = MS_NOSUID | MS_NODEV | MS_NOEXEC;
    // A process of the cell's pid namespace is listed only to its own uid: a call sees its own
    // processes, not the cell (its init, another uid).
    return mountOrFail("proc", "/proc", "proc", kScratch, "hidepid=invisible", error)
            && mountOrFail("tmpfs", "/tmp", "tmpfs", kScratch, tmpOptions.c_str(), error)
            && mountOrFail("tmpfs", "/dev/shm", "tmpfs", kScratch, "size=16m,mode=1777", error)
            && (ns.network || loopbackUp(error));
}

// Not part of enterMinimalRoot: the monitor joins the job to its cgroup while the job builds
// its root, so a namespace made here was rooted wherever the job happened to be (the daemon's
// cgroup, or the hierarchy's root), and /proc/self/cgroup named the job's cgroup path on the
// host ("/cmcp/job-<pid>", "/../../cmcp/job-<pid>" on a v1 hierarchy).
bool enterCgroupNamespace(std::string &error)
{
    if (::unshare(CLONE_NEWCGROUP) != 0) {
        error = errnoText("unshare(CLONE_NEWCGROUP)", errno);
        return false;
    }
    return true;
}

bool enterMinimalRoot(const Policy &policy, const Launch &launch, std::string &error)
{
    const NamespacesPolicy &ns = *policy.namespaces;
    // Nothing mounted from here on may propagate back to the host.
    if (!mountOrFail(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr, error))
        return false;

    // The workspace is reached through the descriptor the job holds (workspace.cpp): the stage
    // may hide its host path, and the job's uid may not be able to search the directories
    // above it. The job's mountinfo still names the workspace's path within its file system
    // (the kernel prints a bind's root so, whatever clone or namespace it came from): on the
    // workspace volume that is /sessions/ws_… of the volume, on a plain directory its host
    // path (docs/security-model.md, "What a job learns of the host's paths").
    if (launch.workspaceFd < 0) {
        error = workspaceError(policy, launch);
        return false;
    }
    const std::string workspaceSource = "/proc/self/fd/" + std::to_string(launch.workspaceFd);

    const std::string root = kStage;
    if (!mountOrFail("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV,
                     "size=1m,nr_inodes=4096,mode=0755", error))
        return false;
    const std::string inner = root + ns.workspaceAt;
    const std::string tmpOptions = "size=" + std::to_string(ns.tmpSizeMb) + "m,mode=1777";
    bool ok = populateSystem(policy, root, error) && populateEtc(policy, root, error)
            && (ns.bin.empty() || populateBin(policy, root, error)) && populateDev(root, error)
            && makeDirs(root + "/proc", error)
            && mountOrFail("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                           nullptr, error)
            && limitNestedUserNamespaces(root + "/proc", launch.nestedUserNamespaces, error)
            && makeDirs(root + "/tmp", error)
            && mountOrFail("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                           tmpOptions.c_str(), error)
            && makeDirs(inner, error) && mountWorkspace(launch, workspaceSource, inner, error)
            && setAttributes(inner, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, true,
                             error);
    if (!ok)
        return false;

    // pivot_root(".", "."): the old root ends up stacked on the new one and is detached at once.
    if (::chdir(root.c_str()) != 0 || ::syscall(SYS_pivot_root, ".", ".") != 0) {
        error = errnoText("pivot_root into the minimal root", errno);
        return false;
    }
    if (::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0) {
        error = errnoText("detaching the host's root", errno);
        return false;
    }
    if (!setAttributes("/", MOUNT_ATTR_RDONLY, false, error))
        return false;

    if (::sethostname(ns.hostname.data(), ns.hostname.size()) != 0 || ::setdomainname("", 0) != 0) {
        error = errnoText("sethostname", errno);
        return false;
    }
    return ns.network || loopbackUp(error);
}

} // namespace cmcp::jail
