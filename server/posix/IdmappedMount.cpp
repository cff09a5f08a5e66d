#include "posix/IdmappedMount.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace cmcp {

namespace {

std::string errnoWords(const std::string &what, int err)
{
    return what + ": " + std::strerror(err);
}

bool writeFile(const std::string &path, const std::string &text, std::string &error)
{
    const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd.isValid() || ::write(fd.get(), text.data(), text.size()) != ssize_t(text.size())) {
        error = errnoWords("writing " + path, errno);
        return false;
    }
    return true;
}

} // namespace

namespace {

// The pipes the idmapping's process and the daemon share: it says "in the namespace" on one and
// waits for the end of the other.
struct IdmapPipes
{
    int unsharedWrite;
    int doneRead;
    int doneWrite;
};

// Runs in the idmapping's process, which shares the daemon's memory (CLONE_VM) but not its
// descriptors: only plain system calls, on its own stack. Its copy of the write end would keep
// its own read from ever seeing the end, so it goes first.
int holdIdmapNamespace(void *argument)
{
    const IdmapPipes pipes = *static_cast<const IdmapPipes *>(argument);
    ::close(pipes.doneWrite);
    char byte = 'u';
    (void)!::write(pipes.unsharedWrite, &byte, 1);
    (void)!::read(pipes.doneRead, &byte, 1);
    return 0;
}

} // namespace

UniqueFd makeIdmapNamespace(uid_t diskUid, uid_t shownUid, gid_t diskGid, gid_t shownGid,
                            std::string &error)
{
    // A process made in a new user namespace, sharing the daemon's memory so that making it
    // copies no page tables (a job's call pays for it: about 0.1 ms), lives until the
    // namespace's maps are written and its descriptor is open.
    int unshared[2];
    int done[2];
    if (::pipe2(unshared, O_CLOEXEC) != 0) {
        error = errnoWords("pipe2", errno);
        return {};
    }
    if (::pipe2(done, O_CLOEXEC) != 0) {
        error = errnoWords("pipe2", errno);
        ::close(unshared[0]);
        ::close(unshared[1]);
        return {};
    }
    const UniqueFd unsharedRead(unshared[0]);
    UniqueFd unsharedWrite(unshared[1]);
    const UniqueFd doneRead(done[0]);
    UniqueFd doneWrite(done[1]);
    constexpr std::size_t kStackBytes = 64 * 1024;
    std::vector<char> stack(kStackBytes);
    IdmapPipes pipes{unshared[1], done[0], done[1]};
    const pid_t child = ::clone(holdIdmapNamespace, stack.data() + stack.size(),
                                CLONE_NEWUSER | CLONE_VM | SIGCHLD, &pipes);
    if (child < 0) {
        error = errnoWords("clone(CLONE_NEWUSER)", errno);
        return {};
    }
    unsharedWrite.reset();
    UniqueFd result;
    char byte = 0;
    if (::read(unsharedRead.get(), &byte, 1) != 1 || byte != 'u') {
        error = "the idmapping's process did not start";
    } else {
        const std::string proc = "/proc/" + std::to_string(child);
        if (writeFile(proc + "/uid_map",
                      std::to_string(diskUid) + " " + std::to_string(shownUid) + " 1\n", error)
            && writeFile(proc + "/gid_map",
                         std::to_string(diskGid) + " " + std::to_string(shownGid) + " 1\n",
                         error)) {
            result.reset(::open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
            if (!result.isValid())
                error = errnoWords("opening " + proc + "/ns/user", errno);
        }
    }
    doneWrite.reset();
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) { }
    return result;
}

UniqueFd cloneIdmappedTree(int directoryFd, int idmapNamespace, std::string &error)
{
    UniqueFd tree(int(::syscall(SYS_open_tree, directoryFd, "",
                                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)));
    if (!tree.isValid()) {
        error = errnoWords("open_tree", errno);
        return {};
    }
    mount_attr attributes{};
    attributes.attr_set =
            MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    attributes.userns_fd = std::uint64_t(idmapNamespace);
    if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attributes, sizeof attributes)
        != 0) {
        error = errnoWords("mount_setattr(MOUNT_ATTR_IDMAP)", errno);
        return {};
    }
    return tree;
}

} // namespace cmcp
