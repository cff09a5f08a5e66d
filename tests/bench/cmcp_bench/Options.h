// cmcp-bench's command line (see --help and docs/benchmarks.md).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cmcp::bench {

struct Options
{
    std::set<std::string> parts{"core", "floor", "http", "sse", "stdio", "throughput", "memory"};
    int n = 5000; // sequential calls per transport and run
    int coreN = 20000; // in-process calls per run
    int warmup = 200;
    int pacedUs = 1000; // pause between calls in the extra "paced" rows (0: no paced rows)
    int repeat = 3;
    std::vector<int> concurrency{50, 200};
    int callsPerSession = 200;
    int idleSessions = 1000;
    // Open/close cycles in the memory part; growth after the first hints at a leak.
    int idleCycles = 2;
    bool idleStreamable = true;
    long daemonNofile = 0; // 0: the daemon inherits this process's (raised) limit
    double maxSeconds = 600; // hard bound on the whole run
    // How long the memory part watches the daemon's CPU with the sessions idle.
    double idleWatchSeconds = 1;
    std::vector<std::string> daemonSettings; // --set NAME=VALUE for every spawned daemon
    std::string cmcpd;
};

void usage();
// The options of `argv`; nothing (after a message on stderr) when they cannot be read. --help
// prints the usage and exits.
std::optional<Options> parseOptions(int argc, char **argv);

} // namespace cmcp::bench
