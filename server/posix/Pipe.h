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

// For a child that gets descriptors besides its stdio (cmcp-jail's --policy-fd and the like):
// `fd` moved above 2, close-on-exec, where 0..2 were free when it was made. False, with errno,
// when that fails.
bool moveAboveStdio(UniqueFd &fd);
// openPipe with both ends above 2.
std::optional<PipePair> openPipeAboveStdio();
// A connected SOCK_SEQPACKET pair, close-on-exec, both ends above 2: a channel to a child that
// passes descriptors (the jail's --egress-fd). Empty, with errno, when that fails.
std::optional<PipePair> openSocketPairAboveStdio();

} // namespace cmcp
