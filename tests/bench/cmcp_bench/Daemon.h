// The daemon that cmcp-bench measures: cmcpd-conformance, cmcpd with the conformance fixtures.
#pragma once

#include "Options.h"

#include <signal.h>
#include <string>
#include <sys/types.h>

namespace cmcp::bench {

struct Daemon
{
    pid_t pid = -1;
    int port = 0;
    int stdinFd = -1; // stdio mode
    int stdoutFd = -1;
    std::string logPath;

    Daemon() = default;
    Daemon(const Daemon &) = delete;
    Daemon &operator=(const Daemon &) = delete;
    ~Daemon() { stop(); }

    // Starts the daemon (o.cmcpd), on stdio or on an HTTP port of 127.0.0.1 that it
    // picks (then waits for its "listening on" line).
    bool spawn(const Options &o, bool stdio, std::string *error);

    bool alive() const { return pid > 0 && kill(pid, 0) == 0; }

    // SIGTERM, then SIGKILL after 15 s; removes the log.
    void stop();
};

} // namespace cmcp::bench
