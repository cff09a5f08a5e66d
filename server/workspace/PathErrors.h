#pragma once

#include <QString>

#include <sys/types.h>

namespace cmcp {

// What an errno from a contained lookup means to a client, in words it can act on.
QString describePathError(int error);

// "a directory", "a FIFO (named pipe)", ... for messages refusing what is not a regular file.
QString describeFileType(mode_t mode);

} // namespace cmcp
