#pragma once

namespace cmcp {

// Makes a directory's entries durable: fsync(2) of a file covers its content, not the name a
// rename or a link gave it in its directory, so a crash could still lose the name. The
// directory `path` is opened relative to `dirFd` (AT_FDCWD for a path, "." for `dirFd` itself).
// False, with errno saying why, when it cannot be opened or synced: callers that can do nothing
// better than try ignore it.
bool fsyncDirectoryAt(int dirFd, const char *path);

} // namespace cmcp
