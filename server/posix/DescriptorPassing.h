#pragma once

#include "posix/UniqueFd.h"

#include <sys/types.h>

#include <cstddef>
#include <vector>

namespace cmcp {

// Descriptors over Unix sockets (SCM_RIGHTS), one message each: how cmcp-jail hands the daemon
// the listener of a job's network namespace, and how a template's processes hand each other a
// call's descriptors. Every descriptor received arrives close-on-exec. Plain libc: cmcp-jail
// compiles this file in too.

// One sendmsg of `data` with `fds` attached (none: a plain send). False with errno set.
bool sendWithFds(int socket, const void *data, std::size_t size, const std::vector<int> &fds);
// One recvmsg into `data` (at most `size` bytes), the descriptors that came with it appended to
// `fds`. Returns the byte count, 0 at end-of-file, -1 with errno set; a message whose
// descriptors did not all fit (MSG_CTRUNC) closes those that came and fails with EMSGSIZE.
// `flags` are recvmsg's (MSG_DONTWAIT for a non-blocking read).
ssize_t receiveWithFds(int socket, void *data, std::size_t size, std::vector<int> &fds,
                       std::size_t maxFds, int flags = 0);
void closeAll(std::vector<int> &fds);

// One descriptor with a one-byte message. True when sent; errno says why not.
bool sendDescriptor(int channel, int fd);
// The descriptor of the next such message, invalid when it carried none. `ended` is set at
// end-of-file or an error other than EAGAIN/EINTR; it does not wait for a message.
UniqueFd receiveDescriptor(int channel, bool *ended);

} // namespace cmcp
