// Messages that name their sender's process (SCM_CREDENTIALS), how a template's processes tell
// the monitor which process a call is. Descriptors travel with posix/DescriptorPassing.h.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace cmcp::jail {

// One sendmsg of `byte` with SCM_CREDENTIALS naming `pid` (in this process's pid namespace; the
// kernel translates it for the receiver, and lets a process name another only with
// CAP_SYS_ADMIN over the user namespace that owns its pid namespace), this process's uid and gid.
bool sendNamingProcess(int socket, char byte, pid_t pid);
// One recvmsg of a message sent with SO_PASSCRED on `socket`: the sender's pid as this process's
// pid namespace sees it in `pid` (0 when none came). Returns the byte count, 0 at end-of-file,
// -1 with errno set.
ssize_t receiveWithSender(int socket, void *data, std::size_t size, pid_t &pid);

} // namespace cmcp::jail
