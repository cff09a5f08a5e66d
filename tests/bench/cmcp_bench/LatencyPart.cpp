#include "LatencyPart.h"

#include "CoreBench.h"
#include "Daemon.h"
#include "Floors.h"
#include "TransportBench.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace cmcp::bench {

namespace {

// One row of the table: the statistics of each run of one path.
struct Row
{
    Row(std::string name, std::string client) : name(std::move(name)), client(std::move(client)) { }
    std::string name;
    std::string client;
    std::vector<Stats> runs;
    std::vector<double> cpu;
    std::vector<std::string> errors;

    void add(const Run &run)
    {
        if (!run.error.empty())
            errors.push_back(run.error);
        if (run.samples.empty())
            return;
        runs.push_back(statsOf(run.samples));
        cpu.push_back(run.serverCpuUs);
    }
    double medianOf(double Stats::*field) const
    {
        std::vector<double> values;
        for (const Stats &s : runs)
            values.push_back(s.*field);
        return median(values);
    }
};

void printLatencyTable(const std::vector<Row> &rows, int repeat)
{
    std::printf("| path | client | calls/run | p50 µs | p99 µs | mean µs | "
                "daemon CPU µs/call | p50 of each run |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---|\n");
    for (const Row &row : rows) {
        if (row.runs.empty()) {
            std::printf("| %s | %s | – | – | – | – | – | %s |\n", row.name.c_str(),
                        row.client.c_str(),
                        row.errors.empty() ? "not run" : ("FAILED: " + row.errors.front()).c_str());
            continue;
        }
        std::string each;
        for (const Stats &s : row.runs)
            each += (each.empty() ? "" : " / ") + num(s.p50);
        const int decimals = row.medianOf(&Stats::p50) < 10 ? 2 : 1;
        std::printf("| %s | %s | %zu | %s | %s | %s | %s | %s |\n", row.name.c_str(),
                    row.client.c_str(), row.runs.front().n,
                    num(row.medianOf(&Stats::p50), decimals).c_str(),
                    num(row.medianOf(&Stats::p99), decimals).c_str(),
                    num(row.medianOf(&Stats::mean), decimals).c_str(), num(median(row.cpu)).c_str(),
                    each.c_str());
        if (!row.errors.empty())
            std::printf("|   ↳ %zu of %d runs failed: %s | | | | | | | |\n", row.errors.size(),
                        repeat, row.errors.front().c_str());
    }
    std::printf("\nMedians over %d run(s); µs = microseconds; \"daemon CPU\" is the spawned "
                "cmcpd's own CPU time (all threads, /proc/PID/task/*/schedstat) divided by the "
                "calls.\n\n",
                repeat);
}

} // namespace

PartOutcome runLatencyPart(const Options &o, const Deadline &deadline)
{
    Row coreTotal{"in-process tools/call test_simple_text (parse+dispatch+serialize)", "none"};
    Row coreParse{"  ↳ of which jsonrpc::parsePayload", "none"};
    Row coreDispatch{"  ↳ of which McpServer::handlePayload (dispatch, tool, serialize)", "none"};
    Row corePing{"in-process ping (parse+dispatch+serialize)", "none"};
    Row tcpFloor{"floor: loopback TCP, fixed HTTP answer (no server work)", "lean socket"};
    Row pipeFloor{"floor: a line through /bin/cat (no server work)", "lean pipe"};
    Row http{"cmcpd Streamable HTTP POST /mcp", "lean socket, keep-alive"};
    Row sse{"cmcpd legacy SSE (POST 202 + event on stream)", "lean socket, keep-alive"};
    Row stdio{"cmcpd stdio (line in, line out)", "lean pipe"};
    const std::string pace = o.pacedUs >= 1000 && o.pacedUs % 1000 == 0
            ? std::to_string(o.pacedUs / 1000) + " ms"
            : std::to_string(o.pacedUs) + " µs";
    Row httpPaced{"cmcpd Streamable HTTP, calls " + pace + " apart", "lean socket, keep-alive"};
    Row ssePaced{"cmcpd legacy SSE, calls " + pace + " apart", "lean socket, keep-alive"};
    Row stdioPaced{"cmcpd stdio, calls " + pace + " apart", "lean pipe"};
    const int pacedN = std::max(100, o.n / 4);
    Daemon daemon;
    std::string error;
    if ((o.parts.count("http") || o.parts.count("sse")) && !daemon.spawn(o, false, &error)) {
        std::fprintf(stderr, "cmcp-bench: %s\n", error.c_str());
        return PartOutcome::CouldNotStart;
    }
    for (int rep = 1; rep <= o.repeat && !deadline.passed(); ++rep) {
        note("latency run %d/%d", rep, o.repeat);
        if (o.parts.count("core")) {
            const CoreRuns core = runCore(o.coreN, o.warmup * 5, deadline);
            coreTotal.add(core.total);
            coreParse.add(core.parse);
            coreDispatch.add(core.dispatch);
            corePing.add(core.ping);
        }
        if (o.parts.count("floor")) {
            tcpFloor.add(runTcpFloor(o.n, o.warmup, deadline));
            pipeFloor.add(runPipeFloor(o.n, o.warmup, deadline));
        }
        if (o.parts.count("http"))
            http.add(runStreamable(daemon, o.n, o.warmup, 0, deadline));
        if (o.parts.count("sse"))
            sse.add(runSse(daemon, o.n, o.warmup, 0, deadline));
        if (o.parts.count("stdio"))
            stdio.add(runStdio(o, o.n, o.warmup, 0, deadline));
        if (o.pacedUs > 0) {
            if (o.parts.count("http"))
                httpPaced.add(runStreamable(daemon, pacedN, o.warmup, o.pacedUs, deadline));
            if (o.parts.count("sse"))
                ssePaced.add(runSse(daemon, pacedN, o.warmup, o.pacedUs, deadline));
            if (o.parts.count("stdio"))
                stdioPaced.add(runStdio(o, pacedN, o.warmup, o.pacedUs, deadline));
        }
    }
    std::vector<Row> rows;
    if (o.parts.count("core"))
        rows.insert(rows.end(), {coreTotal, coreParse, coreDispatch, corePing});
    if (o.parts.count("floor"))
        rows.insert(rows.end(), {tcpFloor, pipeFloor});
    if (o.parts.count("http"))
        rows.push_back(http);
    if (o.parts.count("sse"))
        rows.push_back(sse);
    if (o.parts.count("stdio"))
        rows.push_back(stdio);
    if (o.pacedUs > 0) {
        if (o.parts.count("http"))
            rows.push_back(httpPaced);
        if (o.parts.count("sse"))
            rows.push_back(ssePaced);
        if (o.parts.count("stdio"))
            rows.push_back(stdioPaced);
    }
    bool failed = false;
    for (const Row &row : rows)
        failed = failed || !row.errors.empty();
    std::printf("## Latency of one tools/call (test_simple_text), sequential\n\n");
    printLatencyTable(rows, o.repeat);
    std::fflush(stdout);
    return failed ? PartOutcome::Failed : PartOutcome::Passed;
}

} // namespace cmcp::bench
