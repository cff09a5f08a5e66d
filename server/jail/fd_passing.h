// Descriptors handed between the processes of a template (template.h) over Unix sockets, as
// SCM_RIGHTS with one message each: every descriptor received arrives close-on-exec.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cmcp::jail {

// One sendmsg of `data` with `fds` attached (none: a plain send). False with errno set.
bool sendWithFds(int socket, const void *data, std::size_t size, const std::vector<int> &fds);
// One recvmsg into `data` (at most `size` bytes), the descriptors that came with it appended to
// `fds`. Returns the byte count, 0 at end-of-file, -1 with errno set; a message whose
// descriptors did not all fit (MSG_CTRUNC) closes those that came and fails with EMSGSIZE.
ssize_t receiveWithFds(int socket, void *data, std::size_t size, std::vector<int> &fds,
                       std::size_t maxFds);
// One sendmsg of `byte` with SCM_CREDENTIALS naming `pid` (in this process's pid namespace; the
// kernel translates it for the receiver, and lets a process name another only with
// CAP_SYS_ADMIN over the user namespace that owns its pid namespace), this process's uid and gid.
bool sendNamingProcess(int socket, char byte, pid_t pid);
// One recvmsg of a message sent with SO_PASSCRED on `socket`: the sender's pid as this process's
// pid namespace sees it in `pid` (0 when none came). Same returns as receiveWithFds.
ssize_t receiveWithSender(int socket, void *data, std::size_t size, pid_t &pid);

void closeAll(std::vector<int> &fds);

} // namespace cmcp::jail
