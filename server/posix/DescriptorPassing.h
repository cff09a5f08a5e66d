#pragma once

#include "posix/UniqueFd.h"

namespace cmcp {

// One descriptor over a Unix socket (SCM_RIGHTS), with a one-byte message: how cmcp-jail hands
// the daemon the listener of a job's network namespace.
// True when sent; errno says why not.
bool sendDescriptor(int channel, int fd);
// The descriptor of the next message (close-on-exec), invalid when it carried none. `ended` is
// set at end-of-file or an error other than EAGAIN/EINTR; the socket may be non-blocking.
UniqueFd receiveDescriptor(int channel, bool *ended);

} // namespace cmcp
