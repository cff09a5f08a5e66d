#include "Daemon.h"

#include "Harness.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace cmcp::bench {

bool Daemon::spawn(const Options &o, bool stdio, std::string *error)
{
    char logTemplate[] = "/tmp/cmcp-bench-XXXXXX";
    const int logFd = mkstemp(logTemplate);
    if (logFd < 0) {
        *error = "mkstemp failed";
        return false;
    }
    logPath = logTemplate;
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    if (stdio && (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)) {
        *error = "pipe failed";
        return false;
    }
    std::vector<std::string> args{o.cmcpd};
    for (const std::string &setting : o.daemonSettings)
        args.insert(args.end(), {"--set", setting});
    if (stdio) {
        args.push_back("--stdio");
    } else {
        args.insert(args.end(), {"--host", "127.0.0.1", "--port", "0"});
    }
    std::vector<char *> argv;
    for (std::string &arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int devNull = open("/dev/null", O_RDWR | O_CLOEXEC);
    const rlimit nofile{rlim_t(o.daemonNofile), rlim_t(o.daemonNofile)};
    rlimit hard{};
    getrlimit(RLIMIT_NOFILE, &hard);
    const rlimit wanted{std::min(nofile.rlim_cur, hard.rlim_max), hard.rlim_max};

    pid = fork();
    if (pid < 0) {
        *error = "fork failed";
        return false;
    }
    if (pid == 0) {
        // Only async-signal-safe calls between fork and exec.
        if (o.daemonNofile > 0)
            setrlimit(RLIMIT_NOFILE, &wanted);
        dup2(stdio ? in[0] : devNull, 0);
        dup2(stdio ? out[1] : logFd, 1);
        dup2(logFd, 2);
        execv(argv[0], argv.data());
        _exit(127);
    }
    close(logFd);
    close(devNull);
    if (stdio) {
        close(in[0]);
        close(out[1]);
        stdinFd = in[1];
        stdoutFd = out[0];
        return true;
    }
    // Wait for "listening on http://127.0.0.1:PORT/mcp" in the log.
    const Deadline deadline = Deadline::in(15);
    const std::string marker = "listening on http://127.0.0.1:";
    while (!deadline.passed()) {
        FILE *log = std::fopen(logPath.c_str(), "r");
        if (log) {
            std::string text;
            char chunk[4096];
            size_t got;
            while ((got = std::fread(chunk, 1, sizeof chunk, log)) > 0)
                text.append(chunk, got);
            std::fclose(log);
            const size_t at = text.find(marker);
            if (at != std::string::npos) {
                port = std::atoi(text.c_str() + at + marker.size());
                if (port > 0)
                    return true;
            }
        }
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            pid = -1;
            *error = "cmcpd exited at start (log: " + logPath + ")";
            return false;
        }
        usleep(20000);
    }
    *error = "cmcpd did not report its port within 15 s (log: " + logPath + ")";
    return false;
}

void Daemon::stop()
{
    if (stdinFd >= 0)
        close(stdinFd);
    if (stdoutFd >= 0)
        close(stdoutFd);
    stdinFd = stdoutFd = -1;
    if (pid > 0) {
        kill(pid, SIGTERM);
        int status = 0;
        bool reaped = false;
        // At most 15 s: a daemon under valgrind is slow to exit.
        for (int i = 0; i < 750 && !reaped; ++i) {
            reaped = waitpid(pid, &status, WNOHANG) == pid;
            if (!reaped)
                usleep(20000);
        }
        if (!reaped) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        }
        pid = -1;
    }
    if (!logPath.empty())
        unlink(logPath.c_str());
    logPath.clear();
}

} // namespace cmcp::bench
