#include "workers/browser/SandboxProbe.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace cmcp {

namespace {

// The steps the child takes, in order; its exit status names the one that failed.
enum Step { Unshare = 1, Setgroups, UidMap, Chroot, StepCount };

const char *stepName(int step)
{
    switch (step) {
    case Unshare:
        return "creating a user namespace";
    case Setgroups:
        return "writing /proc/self/setgroups";
    case UidMap:
        return "writing /proc/self/uid_map";
    case Chroot:
        return "chroot inside the user namespace";
    default:
        return "an unknown step";
    }
}

bool writeFile(const char *path, const std::string &text)
{
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool written = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    ::close(fd);
    return written;
}

[[noreturn]] void probeInChild(uid_t uid)
{
    if (::unshare(CLONE_NEWUSER) != 0)
        ::_exit(Unshare);
    if (!writeFile("/proc/self/setgroups", "deny"))
        ::_exit(Setgroups);
    if (!writeFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1"))
        ::_exit(UidMap);
    if (::chroot("/") != 0)
        ::_exit(Chroot);
    ::_exit(0);
}

} // namespace

bool chromiumSandboxUsable(std::string &whyNot)
{
    const uid_t uid = ::getuid();
    const pid_t child = ::fork();
    if (child < 0) {
        whyNot = std::string("fork: ") + std::strerror(errno);
        return false;
    }
    if (child == 0)
        probeInChild(uid);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) { }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
    whyNot = WIFEXITED(status) && WEXITSTATUS(status) < StepCount
            ? std::string(stepName(WEXITSTATUS(status))) + " is not permitted"
            : std::string("the probe process ended abnormally");
    return false;
}

} // namespace cmcp
