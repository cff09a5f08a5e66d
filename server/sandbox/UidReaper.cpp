#include "sandbox/UidReaper.h"

#include "posix/ErrnoText.h"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace cmcp {

namespace {

// A child that becomes `uid` and sends SIGKILL to every process it may signal, which is every
// process whose real or saved uid is `uid` (kill(-1) skips the sender itself). The kernel walks
// the process list under a lock that fork needs, and a process with SIGKILL pending cannot
// complete a fork, so no process of the uid is created behind the walk.
//
// Between fork and _exit only raw system calls: the daemon is multithreaded, another thread may
// hold the malloc lock. The raw setresuid changes this one thread, which is all the child has.
enum ReapStatus { Reaped = 0, SetuidFailed = 2, KillFailed = 3 };

[[noreturn]] void reapInChild(uid_t uid)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    if (syscall(SYS_setresuid, uid, uid, uid) != 0)
        _exit(SetuidFailed);
    if (kill(-1, SIGKILL) != 0 && errno != ESRCH)
        _exit(KillFailed);
    _exit(Reaped);
}

// Once the child runs as `uid`, the job's processes may signal it too. A stop would leave
// waitpid hanging, so stops are waited for and answered with SIGKILL (the attempt then counts
// as failed and is repeated).
bool reapOnce(uid_t uid, QString *error)
{
    const pid_t pid = fork();
    if (pid < 0) {
        *error = QStringLiteral("fork: %1").arg(errnoText(errno));
        return false;
    }
    if (pid == 0)
        reapInChild(uid);
    int status = 0;
    for (;;) {
        if (waitpid(pid, &status, WUNTRACED) < 0) {
            if (errno == EINTR)
                continue;
            *error = QStringLiteral("waitpid: %1").arg(errnoText(errno));
            return false;
        }
        if (!WIFSTOPPED(status))
            break;
        kill(pid, SIGKILL);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == Reaped)
        return true;
    if (WIFEXITED(status) && WEXITSTATUS(status) == SetuidFailed)
        *error = QStringLiteral("setresuid(%1) failed in the reaper").arg(uid);
    else if (WIFEXITED(status) && WEXITSTATUS(status) == KillFailed)
        *error = QStringLiteral("kill(-1, SIGKILL) as uid %1 failed").arg(uid);
    else
        *error = QStringLiteral("the reaper for uid %1 was killed (signal %2)")
                         .arg(uid)
                         .arg(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return false;
}

} // namespace

bool UidReaper::canReap()
{
    return geteuid() == 0;
}

bool UidReaper::killAllProcessesOf(uid_t uid, QString *error)
{
    if (uid == 0 || uid == getuid() || uid == geteuid()) {
        *error = QStringLiteral("refusing to reap uid %1: it is root's or the daemon's").arg(uid);
        return false;
    }
    if (!canReap()) {
        *error = QStringLiteral("reaping uid %1 needs root").arg(uid);
        return false;
    }
    constexpr int kAttempts = 3;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        if (reapOnce(uid, error))
            return true;
    }
    return false;
}

} // namespace cmcp
