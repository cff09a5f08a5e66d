#pragma once

#include "posix/UniqueFd.h"

#include <QByteArray>
#include <QString>

namespace cmcp {

// The directory `path` opened for the *at() calls, never through a symbolic link as its last
// component: invalid, with errno saying why, when it cannot be opened that way.
UniqueFd openDirectory(const QString &path);

// The directory `relative` below the open directory `directoryFd`, opened one component at a
// time with O_NOFOLLOW | O_DIRECTORY: no symbolic link anywhere on the way, no "." or "..", no
// absolute path, so what it opens lies beneath `directoryFd` whatever the names are. For paths
// read back from a file someone else could have written. Invalid, with errno saying why
// (ENOTDIR for a link or a file, EINVAL for a path of another form), otherwise.
UniqueFd openDirectoryBeneath(int directoryFd, const QString &relative);

// The directory `name` of `dirFd` (one name: a subdirectory, or "..") for a walk through a
// tree untrusted users can write: never through a link, never into another mount (a bind mount
// of the same file system included), a subdirectory only beneath `dirFd`; ".." is the one way
// up, which the caller checks. Kernels before openat2 (5.6) get O_NOFOLLOW and the device check
// the caller makes. -1 with errno on failure.
int openDirectoryAt(int dirFd, const QByteArray &name);

} // namespace cmcp
