// The jail process itself stays outside the job, as its monitor: it clones the job (into its
// namespaces), places it in its cgroup, lets it go, reports its start, kills the whole job when
// the supervisor asks (SIGTERM, SIGINT, SIGHUP, SIGQUIT) or dies (parent-death signal),
// answers and counts the calls the job's seccomp filter denies (seccomp_denials.h), and reports
// how it ended. The job process runs `body`, which applies the job-side layers and
// execs; the monitor never runs code of the job.
#pragma once

#include "jail/layers.h"

#include <signal.h>

namespace cmcp::jail {

struct JobProcess
{
    const Policy &policy;
    const SeccompProgram &seccomp;
    char **argv;
    Launch launch;
    int monitorFd = -1; // for failJob (report.h); close-on-exec
    // The Unix socket the job sends its seccomp listener over (seccomp_denials.h), when its
    // filter notifies; -1 otherwise.
    int listenerChannel = -1;
};

using JobBody = void (*)(const JobProcess &job);

// Signals that mean "kill the job now", and SIGCHLD: a monitor blocks them and takes them
// synchronously.
sigset_t monitoredSignals();
// fork(2), or with namespace flags a clone(2) that makes the child pid 1 of a new pid namespace.
// The raw syscall with no stack behaves like fork; glibc's fork handlers do not matter here.
pid_t cloneProcess(int flags);
// Reads the next byte of `fd`: true when it is `expected` (end-of-file: the writer is gone).
bool readFromMonitor(int fd, char expected);

// For the job process: blocks until the monitor has placed it in its cgroup (which it does
// while the job builds its root). Must come before anything of the job runs.
bool awaitPlacement(const Launch &launch, std::string &error);

// The descriptors of the supervisor's the monitor hands the job (Launch says what each is);
// -1: none. The monitor keeps no copy once the job has them.
struct HandedDescriptors
{
    int passFd = -1;
    int egressFd = -1;
    int workspaceViewFd = -1;
};

// Never returns: exits with the job's status (128 + N for signal N), or a refusal's code.
[[noreturn]] void runMonitor(const Policy &policy, const SeccompProgram &seccomp, char **argv,
                             const HandedDescriptors &handed, JobBody body);

} // namespace cmcp::jail
