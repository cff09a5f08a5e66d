#pragma once

#include "posix/UniqueFd.h"

#include <optional>

namespace cmcp {

struct PipePair
{
    UniqueFd read;
    UniqueFd write;
};

// A pipe with both ends close-on-exec (pipe2 with O_CLOEXEC), so that no program started
// meanwhile inherits them; a child meant to have one is given it explicitly. Empty, with errno
// saying why, when pipe2 fails.
std::optional<PipePair> openPipe();

} // namespace cmcp
