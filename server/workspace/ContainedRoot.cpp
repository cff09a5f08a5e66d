#include "workspace/ContainedRoot.h"

#include "posix/ErrnoText.h"
#include "workspace/Workspace.h"

#include <QFile>

#include <cerrno>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#  define SYS_openat2 437
#endif

namespace cmcp {

namespace {

constexpr quint64 containment = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;

// glibc 2.36 has no wrapper.
int rawOpenat2(int dirfd, const char *path, quint64 flags, mode_t mode, quint64 resolve)
{
    open_how how{};
    how.flags = flags;
    // openat2 refuses a mode without O_CREAT or O_TMPFILE.
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = resolve;
    return int(::syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

bool kernelHasOpenat2(int rootFd)
{
    const int fd = rawOpenat2(rootFd, ".", O_PATH | O_CLOEXEC, 0, containment);
    if (fd >= 0) {
        ::close(fd);
        return true;
    }
    // ENOSYS: old kernel; EPERM: a seccomp filter (container runtimes) that denies the call.
    return errno != ENOSYS && errno != EPERM;
}

// openat(O_NOFOLLOW) reports a symbolic link as ENOTDIR when O_DIRECTORY is set (and not at all
// with O_PATH): say ELOOP for every refused link so that callers give one message.
int refinedWalkError(int dirfd, const char *name, int error)
{
    struct stat st
    {
    };
    if ((error == ENOTDIR || error == ELOOP)
        && ::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        return ELOOP;
    return error;
}

} // namespace

std::shared_ptr<const ContainedRoot> ContainedRoot::open(const QString &directory,
                                                         Resolver preferred, QString *error)
{
    UniqueFd root(
            ::open(QFile::encodeName(directory).constData(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.isValid()) {
        *error =
                QStringLiteral("cannot open the workspace %1: %2").arg(directory, errnoText(errno));
        return nullptr;
    }
    const Resolver resolver = preferred == Resolver::Openat2 && kernelHasOpenat2(root.get())
            ? Resolver::Openat2
            : Resolver::ComponentWalk;
    return std::shared_ptr<const ContainedRoot>(new ContainedRoot(std::move(root), resolver));
}

ContainedRoot::Opened ContainedRoot::openBeneath(const WorkspacePath &path, int flags, mode_t mode,
                                                 bool followLast) const
{
    if (m_resolver == Resolver::Openat2)
        return openat2Beneath(path.relativeBytes(), flags, mode, followLast);
    if (path.isRoot())
        return walkBeneath({QStringLiteral(".")}, flags, mode);
    return walkBeneath(path.components(), flags, mode);
}

ContainedRoot::Opened ContainedRoot::openat2Beneath(const QByteArray &relative, int flags,
                                                    mode_t mode, bool followLast) const
{
    const quint64 openFlags = quint64(flags | O_CLOEXEC | (followLast ? 0 : O_NOFOLLOW));
    // EAGAIN: a rename elsewhere raced a ".." inside a symbolic link's target; the kernel asks
    // for a retry rather than risk a wrong answer.
    for (int attempt = 0; attempt < 16; ++attempt) {
        const int fd = rawOpenat2(m_root.get(), relative.constData(), openFlags, mode, containment);
        if (fd >= 0)
            return {UniqueFd(fd), 0};
        if (errno != EAGAIN && errno != EINTR)
            return {UniqueFd(), errno};
    }
    return {UniqueFd(), EAGAIN};
}

ContainedRoot::Opened ContainedRoot::walkBeneath(const QStringList &components, int flags,
                                                 mode_t mode) const
{
    UniqueFd current;
    int dirfd = m_root.get();
    for (qsizetype i = 0; i < components.size(); ++i) {
        const QByteArray name = QFile::encodeName(components[i]);
        const bool last = i == components.size() - 1;
        const int stepFlags = last ? (flags | O_NOFOLLOW | O_CLOEXEC)
                                   : (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        const int fd = ::openat(dirfd, name.constData(), stepFlags, mode);
        if (fd < 0)
            return {UniqueFd(), refinedWalkError(dirfd, name.constData(), errno)};
        current.reset(fd);
        dirfd = fd;
    }
    return {std::move(current), 0};
}

ContainedRoot::Opened ContainedRoot::openParent(const WorkspacePath &path, bool createMissing,
                                                const Workspace *workspace) const
{
    const WorkspacePath parent = path.parent();
    Opened opened = openBeneath(parent, O_PATH | O_DIRECTORY, 0, true);
    if (opened.ok() || opened.error != ENOENT || !createMissing)
        return opened;

    // Build the missing part one directory at a time; each new one is opened again through the
    // containment check, so a directory swapped for a symbolic link meanwhile is refused.
    WorkspacePath reached;
    Opened current = openBeneath(reached, O_PATH | O_DIRECTORY, 0, true);
    for (const QString &component : parent.components()) {
        if (!current.ok())
            return current;
        const WorkspacePath next = reached.child(component);
        Opened step = openBeneath(next, O_PATH | O_DIRECTORY, 0, true);
        if (!step.ok() && step.error == ENOENT) {
            const QByteArray name = QFile::encodeName(component);
            if (::mkdirat(current.fd.get(), name.constData(), 0775) != 0 && errno != EEXIST)
                return {UniqueFd(), errno};
            step = openBeneath(next, O_RDONLY | O_DIRECTORY, 0, false);
            if (step.ok() && workspace && !workspace->adoptCreated(step.fd.get(), true))
                return {UniqueFd(), errno};
        }
        current = std::move(step);
        reached = next;
    }
    return current;
}

} // namespace cmcp
