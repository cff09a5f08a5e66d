// cmcp-bench: latency, throughput and idle-memory benchmarks of cmcpd (see docs/benchmarks.md).
//
//   core        tools/call of a trivial tool through McpServer in this process: parse →
//               dispatch → serialize, no transport ("inside the server" time).
//   floor       what the lean client and the kernel cost alone: the same HTTP client against a
//               fixed-answer socket in this process, and a line through /bin/cat for stdio.
//   http, sse, stdio
//               tools/call round trips against a spawned cmcpd with a lean client (raw keep-alive
//               sockets or pipes, no SDK), back to back and paced (as a slower client sends them),
//               with the daemon's own CPU time per call (from schedstat).
//   throughput  C concurrent Streamable HTTP sessions, K calls each, driven from one epoll loop.
//   memory      RSS of a fresh cmcpd before and after opening many idle sessions (legacy SSE
//               streams; Streamable HTTP sessions with their GET stream), the cost of a call while
//               they are open, health and RSS after closing them, over several cycles.
//
// Every loop is bounded in count and time; all traffic goes to 127.0.0.1. Not part of ctest.
//
// The files: one per part (CoreBench, Floors and TransportBench make up the latency table of
// LatencyPart; ThroughputBench; IdleMemoryBench), and what they share: the spawned daemon
// (Daemon), the lean HTTP and SSE client (LeanHttp, SseClient), the MCP messages (McpMessages),
// /proc (ProcStats), the clock, deadlines and statistics (Harness) and the command line (Options).

#include "Harness.h"
#include "IdleMemoryBench.h"
#include "LatencyPart.h"
#include "Options.h"
#include "ThroughputBench.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QtGlobal>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <signal.h>
#include <string>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

using namespace cmcp::bench;

namespace {

std::string machineLine()
{
    utsname names{};
    uname(&names);
    char line[512];
    std::snprintf(line, sizeof line, "%u CPUs (nproc), kernel %s, Qt %s (runtime), %s",
                  std::thread::hardware_concurrency(), names.release, qVersion(),
                  QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toUtf8().constData());
    return line;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    spdlog::set_level(spdlog::level::warn); // the in-process server logs every initialize at info
    signal(SIGPIPE, SIG_IGN);

    std::optional<Options> parsed = parseOptions(argc, argv);
    if (!parsed)
        return 2;
    Options o = *parsed;
    if (o.cmcpd.empty())
        o.cmcpd = QCoreApplication::applicationDirPath().toStdString()
                + "/../../server/cmcpd-conformance";
    const bool needsDaemon = o.parts.count("http") || o.parts.count("sse") || o.parts.count("stdio")
            || o.parts.count("throughput") || o.parts.count("memory");
    if (needsDaemon && access(o.cmcpd.c_str(), X_OK) != 0) {
        std::fprintf(stderr, "cmcp-bench: cannot run %s (use --cmcpd PATH)\n", o.cmcpd.c_str());
        return 2;
    }

    // Many sessions need many sockets here and in the daemon (which inherits this limit).
    rlimit nofile{};
    getrlimit(RLIMIT_NOFILE, &nofile);
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
    getrlimit(RLIMIT_NOFILE, &nofile);
    const long maxConcurrency = o.concurrency.empty()
            ? 0
            : *std::max_element(o.concurrency.begin(), o.concurrency.end());
    const long needed = 2L * o.idleSessions + 2L * maxConcurrency + 64;
    if (long(nofile.rlim_cur) < needed)
        note("warning: RLIMIT_NOFILE is %ld, fewer than the %ld descriptors this run may need",
             long(nofile.rlim_cur), needed);

    const Deadline deadline = Deadline::in(o.maxSeconds);
    bool failed = false;
    std::string settings;
    for (const std::string &setting : o.daemonSettings)
        settings += " --set " + setting;
    std::printf("# cmcp-bench\n\nMachine: %s. Daemon: %s%s. RLIMIT_NOFILE %ld (daemon: %s).\n\n",
                machineLine().c_str(), o.cmcpd.c_str(), settings.c_str(), long(nofile.rlim_cur),
                o.daemonNofile > 0 ? std::to_string(o.daemonNofile).c_str() : "inherited");
    std::fflush(stdout);

    const bool latencyParts = o.parts.count("core") || o.parts.count("floor")
            || o.parts.count("http") || o.parts.count("sse") || o.parts.count("stdio");
    // A part that cannot start its daemon ends the run; one that fails lets the others run.
    auto settle = [&failed](PartOutcome outcome) {
        failed = failed || outcome == PartOutcome::Failed;
        return outcome != PartOutcome::CouldNotStart;
    };
    if (latencyParts && !settle(runLatencyPart(o, deadline)))
        return 1;
    if (o.parts.count("throughput") && !deadline.passed()
        && !settle(runThroughputPart(o, deadline)))
        return 1;
    if (o.parts.count("memory") && !deadline.passed())
        settle(runMemoryPart(o, deadline));

    if (deadline.passed()) {
        std::printf("Stopped at the --max-seconds bound (%.0f s): some parts are incomplete.\n",
                    o.maxSeconds);
        failed = true;
    }
    return failed ? 1 : 0;
}
