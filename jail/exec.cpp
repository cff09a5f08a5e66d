// Final step: working directory, program lookup, execve with exactly the policy environment.
// Runs after identity, so every check here (search permission on the workspace, execute
// permission on the program) is made with the job's own uid. The directories above the
// workspace are not checked: without the minimal root the workspace is the descriptor the job
// holds from before the identity switch (workspace.cpp).
#include "jail/layers.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cmcp::jail {

bool enterWorkdir(const Policy &policy, const Launch &launch, std::string &error)
{
    // Inside the minimal root the workspace is the bind at workspace_at (noexec), not the host's
    // mount the held descriptor names.
    int ws;
    if (policy.namespaces) {
        ws = ::open(policy.jobWorkspace().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (ws < 0) {
            error = errnoText("workspace " + policy.jobWorkspace(), errno);
            return false;
        }
    } else {
        if (launch.workspaceFd < 0) {
            error = workspaceError(policy, launch);
            return false;
        }
        ws = ::dup(launch.workspaceFd);
        if (ws < 0) {
            error = errnoText("dup of the workspace descriptor", errno);
            return false;
        }
    }
    int dir = ws;
    if (!policy.cwd.empty()) {
        // Beneath the workspace only: no "..", no absolute symlinks, no /proc magic links, even if
        // an earlier job planted a symlink in the workspace.
        open_how how{};
        how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        long fd = ::syscall(SYS_openat2, ws, policy.cwd.c_str(), &how, sizeof how);
        if (fd < 0) {
            int err = errno;
            ::close(ws);
            error = errnoText("cwd " + policy.cwd + " beneath the workspace", err);
            return false;
        }
        dir = static_cast<int>(fd);
    }
    int rc = ::fchdir(dir);
    int err = errno;
    if (dir != ws)
        ::close(dir);
    ::close(ws);
    if (rc != 0) {
        error = errnoText("chdir into the working directory", err);
        return false;
    }
    return true;
}

namespace {

// The program as given if it contains a slash; otherwise the first executable regular file
// along the policy's PATH (not the jail's own, which the job never sees).
bool resolveProgram(const Policy &policy, const std::string &program, std::string &out,
                    std::string &error)
{
    if (program.empty()) {
        error = "empty program name";
        return false;
    }
    if (program.find('/') != std::string::npos) {
        out = program;
        return true;
    }
    std::string path;
    for (const auto &[k, v] : policy.env)
        if (k == "PATH")
            path = v;
    if (path.empty()) {
        error = program + ": not a path and the policy sets no PATH";
        return false;
    }
    int lastErr = ENOENT;
    std::size_t i = 0;
    while (i <= path.size()) {
        std::size_t j = path.find(':', i);
        if (j == std::string::npos)
            j = path.size();
        std::string dir = path.substr(i, j - i);
        i = j + 1;
        if (dir.empty() || dir[0] != '/')
            continue; // relative PATH entries are ignored
        std::string candidate = dir + "/" + program;
        struct stat st
        {
        };
        if (::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (::access(candidate.c_str(), X_OK) != 0) {
            lastErr = errno;
            continue;
        }
        out = candidate;
        return true;
    }
    error = errnoText(program + ": not found along the policy's PATH", lastErr);
    return false;
}

} // namespace

bool execJob(const Policy &policy, const Launch &launch, char *const argv[], std::string &error)
{
    std::string program;
    if (!resolveProgram(policy, argv[0], program, error))
        return false;

    std::vector<std::string> envStrings;
    envStrings.reserve(policy.env.size());
    for (const auto &[k, v] : policy.env)
        envStrings.push_back(k + "=" + v);
    std::vector<char *> envp;
    for (auto &s : envStrings)
        envp.push_back(s.data());
    envp.push_back(nullptr);

    // A script cannot run from a close-on-exec descriptor (its interpreter would open
    // /dev/fd/N after the exec closed it): it is run by its path, as without a descriptor.
    if (launch.programFd >= 0)
        ::syscall(SYS_execveat, launch.programFd, "", argv, envp.data(), AT_EMPTY_PATH);
    ::execve(program.c_str(), argv, envp.data());
    error = errnoText("execve " + program, errno);
    return false;
}

void holdProgram(const Policy &policy, const char *program, Launch &launch)
{
    // Only the path is resolved with the jail's privileges: execute permission on the file
    // itself is still checked for the job's uid at the exec, and Landlock and AppArmor judge
    // the file as they would by its path.
    const bool minimalRoot = policy.wants(Layer::Namespaces);
    if ((minimalRoot && !policy.namespaces->programFromHost) || program == nullptr
        || program[0] != '/')
        return;
    launch.programFd = ::open(program, O_PATH | O_CLOEXEC);
}

} // namespace cmcp::jail
