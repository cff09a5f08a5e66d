// The workspace, reached while privileged. A job's layers used to open the workspace by its host
// path after the identity switch, so every directory above it had to be searchable by the pool
// uids; a SANDBOX_ROOT below /root (0700) or a mktemp directory failed every job. The monitor
// opens it instead, before the clone, and the job keeps it by a descriptor.
//
// Why through the working directory and not a descriptor: a descriptor opened in the monitor
// names a mount of the host's mount namespace, and the kernel refuses to bind a mount of
// another namespace (EINVAL). The working directory is different: clone(CLONE_NEWNS) moves the
// child's root and working directory onto the copies of their mounts in its new namespace.
//
// The path is the daemon's: SANDBOX_ROOT and the directories beneath it that hold workspaces
// are root's, so no job can swap a component of it for a link before the monitor opens it.
#include "jail/layers.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace cmcp::jail {

int enterWorkspace(const Policy &policy)
{
    int fd = ::open(policy.workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int rc = ::fchdir(fd);
    int err = errno;
    ::close(fd);
    return rc == 0 ? 0 : err;
}

void holdWorkspace(Launch &launch)
{
    if (launch.workspaceErrno != 0)
        return;
    // "." needs no permission on any directory above it, nor on itself (O_PATH).
    launch.workspaceFd = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (launch.workspaceFd < 0)
        launch.workspaceErrno = errno;
}

std::string workspaceError(const Policy &policy, const Launch &launch)
{
    return errnoText("workspace " + policy.workspace, launch.workspaceErrno);
}

} // namespace cmcp::jail
