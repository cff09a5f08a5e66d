#include "IdleMemoryBench.h"

#include "Daemon.h"
#include "LeanHttp.h"
#include "McpMessages.h"
#include "ProcStats.h"
#include "SseClient.h"
#include "TransportBench.h"

#include <cstdio>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace cmcp::bench {

namespace {

Stats statusOf(const Run &run)
{
    return run.samples.empty() ? Stats{} : statsOf(run.samples);
}

// One row of the memory table: one kind of idle session on a fresh daemon.
struct Memory
{
    std::string kind;
    int wanted = 0;
    int opened = 0;
    long rssBefore = -1, rssOpen = -1, rssAfterClose = -1, rssAfterLast = -1; // kB
    long rssSettled = -1; // kB, once the daemon's heap trim after a burst of closes has run
    std::vector<long> rssPerCycle; // after each close
    int threadsBefore = -1, threadsOpen = -1;
    int sessionsReported = -1; // /health while open
    double idleCpuMsPerS = NAN; // the daemon's CPU use while the sessions sit idle
    // Sequential Streamable HTTP calls with no other session, and with the idle ones open.
    Stats callAlone, callBusy;
    double cpuAlone = NAN, cpuBusy = NAN; // the daemon's CPU µs per call in those
    double openSeconds = 0;
    bool healthyAfter = false;
    std::string error;
};

bool waitSessions(int port, int wanted, const Deadline &deadline)
{
    while (!deadline.passed()) {
        if (healthSessions(port, deadline.capped(5)) == wanted)
            return true;
        usleep(50000);
    }
    return false;
}

// A fresh Streamable HTTP call on its own session, to show the daemon still serves.
bool oneCall(int port, const Deadline &deadline)
{
    HttpConn conn;
    std::string sessionId, error;
    HttpResponse response;
    const bool ok = conn.open(port) && streamableHandshake(conn, port, sessionId, deadline, &error)
            && conn.roundTrip(httpPost(port, "/mcp", callBody(7), sessionId), response, deadline)
            && response.status == 200 && callAnswered(response.body, 7);
    if (!sessionId.empty())
        conn.roundTrip(httpDelete(port, sessionId), response, deadline);
    return ok;
}

// Idle sessions held open by this process: legacy SSE streams, or Streamable HTTP sessions each
// with its GET stream (on the connection that initialized it: one socket per session).
struct IdleSessions
{
    int port = 0;
    bool streamable = false;
    pid_t daemonPid = -1;
    std::vector<SseSession> sse;
    std::vector<SseReader> getStreams;
    std::vector<std::string> ids;

    // Returns how many were opened; stops at the first failure (with `error` set).
    int open(int count, const Deadline &deadline, std::string *error)
    {
        HttpConn post;
        if (!post.open(port)) {
            *error = "cannot connect";
            return 0;
        }
        int opened = 0;
        // On a failure, with the failed connection still open: is the daemon idle or busy?
        auto busy = [this] {
            const qint64 cpu0 = cpuNs(daemonPid);
            usleep(1000000);
            return " (the daemon used " + num(double(cpuNs(daemonPid) - cpu0) / 1e6, 0)
                    + " ms of CPU in the next second, the failed connection still open)";
        };
        for (int i = 0; i < count && !deadline.passed(); ++i) {
            const Deadline each = deadline.capped(5);
            if (streamable) {
                HttpConn conn;
                std::string sessionId;
                if (!conn.open(port) || !streamableHandshake(conn, port, sessionId, each, error)) {
                    *error = "session " + std::to_string(i) + ": "
                            + (error->empty() ? "cannot connect" : *error) + busy();
                    break;
                }
                ids.push_back(sessionId);
                SseReader stream;
                stream.fd = std::exchange(conn.fd, -1);
                if (!writeAll(stream.fd, httpGet(port, "/mcp", "text/event-stream", sessionId),
                              each)
                    || !stream.readHead(each)) {
                    *error = "GET stream " + std::to_string(i) + " refused (HTTP "
                            + std::to_string(stream.status) + ")" + busy();
                    break;
                }
                getStreams.push_back(std::move(stream));
            } else {
                SseSession session;
                if (!session.open(port, each, error)
                    || !session.handshake(post, port, each, error)) {
                    *error = "SSE session " + std::to_string(i) + ": " + *error + busy();
                    break;
                }
                sse.push_back(std::move(session));
            }
            ++opened;
        }
        return opened;
    }

    // Closes every stream (and DELETEs the Streamable HTTP sessions); true once /health shows none.
    bool close(const Deadline &deadline)
    {
        sse.clear();
        getStreams.clear();
        if (streamable) {
            HttpConn conn;
            HttpResponse response;
            if (conn.open(port))
                for (const std::string &id : ids)
                    if (!conn.roundTrip(httpDelete(port, id), response, deadline.capped(5)))
                        break;
        }
        ids.clear();
        return waitSessions(port, 0, deadline.capped(15));
    }
};

Memory runIdle(const Options &o, bool streamable, const Deadline &deadline)
{
    Memory out;
    out.kind = streamable ? "Streamable HTTP session + GET stream"
                          : "legacy SSE stream (initialized session)";
    out.wanted = o.idleSessions;
    Daemon daemon;
    if (!daemon.spawn(o, false, &out.error))
        return out;
    const int port = daemon.port;
    // Warm the code paths once, so the baseline holds what any first session would allocate.
    {
        IdleSessions warm{port, streamable, daemon.pid, {}, {}, {}};
        std::string error;
        if (warm.open(1, deadline.capped(10), &error) != 1 || !warm.close(deadline)
            || !oneCall(port, deadline.capped(10))) {
            out.error = "warm-up failed: " + error;
            return out;
        }
    }
    const int probeCalls = 2000;
    {
        const Run alone = runStreamable(daemon, probeCalls, 200, 0, deadline);
        out.callAlone = statusOf(alone);
        out.cpuAlone = alone.serverCpuUs;
    }
    waitSessions(port, 0, deadline.capped(10));
    usleep(300000);
    out.rssBefore = statusKb(daemon.pid, "VmRSS");
    out.threadsBefore = threadCount(daemon.pid);

    IdleSessions idle{port, streamable, daemon.pid, {}, {}, {}};
    const auto start = Clock::now();
    out.opened = idle.open(o.idleSessions, deadline.capped(120), &out.error);
    out.openSeconds = usBetween(start, Clock::now()) / 1e6;
    usleep(500000); // let the daemon settle, then watch it idle for a second
    const qint64 cpu0 = cpuNs(daemon.pid);
    const auto idleStart = Clock::now();
    usleep(useconds_t(o.idleWatchSeconds * 1e6));
    out.idleCpuMsPerS =
            double(cpuNs(daemon.pid) - cpu0) / 1e6 / (usBetween(idleStart, Clock::now()) / 1e6);
    out.rssOpen = statusKb(daemon.pid, "VmRSS");
    out.threadsOpen = threadCount(daemon.pid);
    out.sessionsReported = healthSessions(port, deadline.capped(10));
    {
        // Does a call get slower when many idle connections are open beside it?
        const Run busy = runStreamable(daemon, probeCalls, 200, 0, deadline);
        out.callBusy = statusOf(busy);
        out.cpuBusy = busy.serverCpuUs;
    }

    // Close everything: the daemon must let the sessions go and still serve.
    bool drained = idle.close(deadline);
    usleep(300000);
    out.rssAfterClose = statusKb(daemon.pid, "VmRSS");
    out.rssPerCycle.push_back(out.rssAfterClose);
    // More open/close cycles: RSS that keeps growing cycle after cycle would be a leak, not
    // allocator reuse.
    for (int cycle = 2; cycle <= o.idleCycles && out.error.empty() && drained && !deadline.passed();
         ++cycle) {
        std::string error;
        const int again = idle.open(o.idleSessions, deadline.capped(120), &error);
        drained = idle.close(deadline);
        usleep(300000);
        out.rssPerCycle.push_back(statusKb(daemon.pid, "VmRSS"));
        if (again != o.idleSessions && out.error.empty())
            out.error = "cycle " + std::to_string(cycle) + ": " + error;
    }
    out.rssAfterLast = out.rssPerCycle.back();
    // cmcpd trims its heap 2 s after the last of a burst of closes (trimHeapAfterSessionsClose):
    // only then can RSS be compared with the baseline.
    usleep(3000000);
    out.rssSettled = statusKb(daemon.pid, "VmRSS");
    const bool callWorks = oneCall(port, deadline.capped(10));
    out.healthyAfter =
            drained && callWorks && healthSessions(port, deadline.capped(5)) == 0 && daemon.alive();
    if (!drained && out.error.empty())
        out.error = "sessions were not released after closing";
    return out;
}

} // namespace

PartOutcome runMemoryPart(const Options &o, const Deadline &deadline)
{
    bool failed = false;
    std::printf(
            "## Idle memory: a fresh cmcpd, VmRSS before and after opening %d idle sessions\n\n",
            o.idleSessions);
    std::printf("| kind | opened | open took s | RSS before MB | RSS open MB | delta MB | "
                "KB/session | daemon CPU idle ms/s | threads | /health sessions | "
                "RSS after each close MB | RSS 3 s later MB | healthy after |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---|\n");
    std::vector<bool> kinds{false};
    if (o.idleStreamable)
        kinds.push_back(true);
    std::string calls;
    for (bool streamable : kinds) {
        if (deadline.passed())
            break;
        note("idle memory: %s", streamable ? "Streamable HTTP" : "legacy SSE");
        const Memory m = runIdle(o, streamable, deadline);
        const double delta = double(m.rssOpen - m.rssBefore) / 1024.0;
        std::string cycles;
        for (long kb : m.rssPerCycle)
            cycles += (cycles.empty() ? "" : " → ") + num(double(kb) / 1024.0);
        std::printf("| %s | %d/%d | %s | %s | %s | %s | %s | %s | %d → %d | %d | %s | %s | %s |\n",
                    m.kind.c_str(), m.opened, m.wanted, num(m.openSeconds, 2).c_str(),
                    num(double(m.rssBefore) / 1024.0).c_str(),
                    num(double(m.rssOpen) / 1024.0).c_str(), num(delta).c_str(),
                    num(m.opened > 0 ? double(m.rssOpen - m.rssBefore) / double(m.opened) : NAN)
                            .c_str(),
                    num(m.idleCpuMsPerS).c_str(), m.threadsBefore, m.threadsOpen,
                    m.sessionsReported, cycles.c_str(), num(double(m.rssSettled) / 1024.0).c_str(),
                    m.healthyAfter ? "yes" : "NO");
        calls += "| " + m.kind + " | " + num(m.callAlone.p50) + " | " + num(m.callAlone.p99) + " | "
                + num(m.cpuAlone) + " | " + std::to_string(m.opened) + " | " + num(m.callBusy.p50)
                + " | " + num(m.callBusy.p99) + " | " + num(m.cpuBusy) + " |\n";
        if (!m.error.empty() || m.opened != m.wanted || !m.healthyAfter) {
            std::printf("\nFAILED (%s): %s\n\n", m.kind.c_str(),
                        m.error.empty() ? "see the row above" : m.error.c_str());
            failed = true;
        }
        std::fflush(stdout);
    }
    std::printf("\nA Streamable HTTP tools/call on the same daemon, 2000 sequential calls, before "
                "the idle sessions are opened and while they are open:\n\n");
    std::printf("| idle kind | alone p50 µs | alone p99 µs | alone daemon CPU µs/call | "
                "idle sessions open | p50 µs | p99 µs | daemon CPU µs/call |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|\n%s",
                calls.c_str());
    std::printf("\n\"healthy after\": after closing, /health answers with 0 sessions and a new "
                "session's tools/call works. Target: 1,000 idle sessions add under 50 MB.\n\n");
    return failed ? PartOutcome::Failed : PartOutcome::Passed;
}

} // namespace cmcp::bench
