#include "posix/IdmappedMount.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

UniqueFd makeIdmapNamespace(uid_t diskUid, uid_t shownUid, gid_t diskGid, gid_t shownGid,
                            std::string &error)
{
    // The child only unshares and waits: async-signal-safe calls, as a child of a threaded
    // daemon must. "Unshared" comes back on one pipe, "done" goes out on the other.
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
    const pid_t child = ::fork();
    if (child == 0) {
        // Its copy of the write end would keep its own read from ever seeing the end.
        ::close(done[1]);
        ::close(unshared[0]);
        char byte = ::unshare(CLONE_NEWUSER) == 0 ? 'u' : 'e';
        (void)!::write(unshared[1], &byte, 1);
        (void)!::read(done[0], &byte, 1);
        ::_exit(0);
    }
    const int forkError = errno;
    ::close(unshared[1]);
    ::close(done[0]);
    const UniqueFd unsharedRead(unshared[0]);
    UniqueFd doneWrite(done[1]);
    if (child < 0) {
        error = errnoWords("fork", forkError);
        return {};
    }
    UniqueFd result;
    char byte = 0;
    if (::read(unsharedRead.get(), &byte, 1) != 1 || byte != 'u') {
        error = "unshare(CLONE_NEWUSER) failed in the idmapping's process";
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
