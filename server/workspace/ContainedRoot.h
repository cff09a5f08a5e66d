#pragma once

#include "posix/UniqueFd.h"
#include "workspace/WorkspacePath.h"

#include <QString>

#include <sys/types.h>

#include <memory>

namespace cmcp {

class Workspace;

// A descriptor of the workspace directory and the only way the file tools reach what lies
// below it. Every lookup starts at that descriptor and is confined by the kernel: openat2 with
// RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS refuses absolute symbolic links, ".." above the root
// and /proc magic links wherever they occur, so symbolic links resolve only while they stay
// inside. Where openat2 is missing (Linux before 5.6, or seccomp filters that deny it), a walk
// opens one component at a time with O_NOFOLLOW and follows no symbolic link at all: stricter,
// never looser.
class ContainedRoot
{
public:
    enum class Resolver { Openat2, ComponentWalk };

    // Holds `workspace`'s directory open for the lifetime of the object. `preferred` is
    // Openat2 except in tests of the walk; Openat2 degrades to the walk when the kernel lacks it.
    static std::shared_ptr<const ContainedRoot> open(const QString &directory, Resolver preferred,
                                                     QString *error);

    Resolver resolver() const { return m_resolver; }

    // A descriptor, or -errno: EXDEV for a path the kernel found leaving the workspace, ELOOP for
    // a symbolic link that may not be followed (loops, magic links, any link with `followLast`
    // false in last position, any link at all in the walk).
    struct Opened
    {
        UniqueFd fd;
        int error = 0;
        bool ok() const { return fd.isValid(); }
    };

    // Opens `path` with open(2) `flags` (O_CLOEXEC added). Symbolic links on the way resolve when
    // they stay inside; the last component is followed only when `followLast`.
    Opened openBeneath(const WorkspacePath &path, int flags, mode_t mode, bool followLast) const;

    // An O_PATH descriptor of the directory holding `path`'s last component, for *at(2) calls on
    // that single name. With `createMissing`, missing directories are made one at a time with
    // mkdirat relative to their verified parent and given to the sandbox group by `workspace`.
    Opened openParent(const WorkspacePath &path, bool createMissing,
                      const Workspace *workspace) const;

private:
    ContainedRoot(UniqueFd root, Resolver resolver) : m_root(std::move(root)), m_resolver(resolver)
    {
    }
    Opened openat2Beneath(const QByteArray &relative, int flags, mode_t mode,
                          bool followLast) const;
    Opened walkBeneath(const QStringList &components, int flags, mode_t mode) const;

    UniqueFd m_root;
    Resolver m_resolver;
};

} // namespace cmcp
