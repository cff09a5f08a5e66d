#pragma once

#include "posix/UniqueFd.h"

#include <QString>

namespace cmcp {

// The directory `path` opened for the *at() calls, never through a symbolic link as its last
// component: invalid, with errno saying why, when it cannot be opened that way.
UniqueFd openDirectory(const QString &path);

} // namespace cmcp
