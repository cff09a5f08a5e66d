#pragma once

#include <cstddef>

namespace cmcp {

// Writes all `size` bytes of `data` to `fd`, going on after a partial write and after EINTR
// (a pipe or a socket takes what fits, a signal interrupts a blocking write). Returns how many
// bytes were written: `size`, or fewer with errno saying why (ENOSPC for a write that wrote
// nothing). Plain libc, no Qt: cmcp-jail and cmcp-html use it too.
std::size_t writeAll(int fd, const void *data, std::size_t size);

} // namespace cmcp
