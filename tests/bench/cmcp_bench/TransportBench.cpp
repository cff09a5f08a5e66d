#include "TransportBench.h"

#include "LeanHttp.h"
#include "McpMessages.h"
#include "ProcStats.h"
#include "SseClient.h"

#include <string>
#include <unistd.h>

namespace cmcp::bench {

Run runStreamable(const Daemon &daemon, int n, int warmup, int thinkUs, const Deadline &deadline)
{
    Run run;
    HttpConn conn;
    std::string sessionId;
    const Deadline setup = deadline.capped(10);
    if (!conn.open(daemon.port)
        || !streamableHandshake(conn, daemon.port, sessionId, setup, &run.error))
        return run;
    HttpResponse response;
    const Deadline each = deadline.capped(60);
    qint64 cpu0 = 0;
    for (long i = 1; i <= warmup + n && !each.passed(); ++i) {
        if (thinkUs > 0)
            usleep(useconds_t(thinkUs));
        if (i == warmup + 1)
            cpu0 = cpuNs(daemon.pid);
        const std::string request = httpPost(daemon.port, "/mcp", callBody(i), sessionId);
        const auto t0 = Clock::now();
        if (!conn.roundTrip(request, response, each.capped(5)) || response.status != 200
            || !callAnswered(response.body, i)) {
            run.error = "http: call " + std::to_string(i) + " failed (HTTP "
                    + std::to_string(response.status) + ")";
            break;
        }
        const auto t1 = Clock::now();
        if (i > warmup)
            run.samples.push_back(usBetween(t0, t1));
    }
    if (!run.samples.empty())
        run.serverCpuUs = double(cpuNs(daemon.pid) - cpu0) / 1000.0 / double(run.samples.size());
    conn.roundTrip(httpDelete(daemon.port, sessionId), response, deadline.capped(5));
    return run;
}

Run runSse(const Daemon &daemon, int n, int warmup, int thinkUs, const Deadline &deadline)
{
    Run run;
    SseSession session;
    HttpConn post;
    const Deadline setup = deadline.capped(10);
    if (!session.open(daemon.port, setup, &run.error) || !post.open(daemon.port)
        || !session.handshake(post, daemon.port, setup, &run.error))
        return run;
    const Deadline each = deadline.capped(60);
    std::string reply;
    qint64 cpu0 = 0;
    for (long i = 1; i <= warmup + n && !each.passed(); ++i) {
        if (thinkUs > 0)
            usleep(useconds_t(thinkUs));
        if (i == warmup + 1)
            cpu0 = cpuNs(daemon.pid);
        const std::string body = callBody(i);
        const auto t0 = Clock::now();
        if (!session.send(post, daemon.port, body, i, &reply, each.capped(5), &run.error)
            || !callAnswered(reply, i)) {
            if (run.error.empty())
                run.error = "sse: wrong reply to call " + std::to_string(i);
            break;
        }
        const auto t1 = Clock::now();
        if (i > warmup)
            run.samples.push_back(usBetween(t0, t1));
    }
    if (!run.samples.empty())
        run.serverCpuUs = double(cpuNs(daemon.pid) - cpu0) / 1000.0 / double(run.samples.size());
    return run;
}

Run runStdio(const Options &o, int n, int warmup, int thinkUs, const Deadline &deadline)
{
    Run run;
    Daemon daemon;
    if (!daemon.spawn(o, true, &run.error))
        return run;
    std::string buffer;
    auto exchange = [&](const std::string &line, long id, std::string *reply, const Deadline &d) {
        if (!writeAll(daemon.stdinFd, line + "\n", d))
            return false;
        if (id < 0)
            return true;
        for (;;) {
            size_t newline;
            while ((newline = buffer.find('\n')) == std::string::npos)
                if (readSome(daemon.stdoutFd, buffer, d) <= 0)
                    return false;
            std::string got = buffer.substr(0, newline);
            buffer.erase(0, newline + 1);
            if (hasId(got, id)) {
                if (reply)
                    *reply = std::move(got);
                return true;
            }
        }
    };
    const Deadline setup = deadline.capped(10);
    if (!exchange(initializeBody, 0, nullptr, setup)
        || !exchange(initializedBody, -1, nullptr, setup)) {
        run.error = "stdio: handshake failed";
        return run;
    }
    const Deadline each = deadline.capped(60);
    std::string reply;
    qint64 cpu0 = 0;
    for (long i = 1; i <= warmup + n && !each.passed(); ++i) {
        if (thinkUs > 0)
            usleep(useconds_t(thinkUs));
        if (i == warmup + 1)
            cpu0 = cpuNs(daemon.pid);
        const std::string line = callBody(i);
        const auto t0 = Clock::now();
        if (!exchange(line, i, &reply, each.capped(5)) || !callAnswered(reply, i)) {
            run.error = "stdio: call " + std::to_string(i) + " failed";
            break;
        }
        const auto t1 = Clock::now();
        if (i > warmup)
            run.samples.push_back(usBetween(t0, t1));
    }
    if (!run.samples.empty())
        run.serverCpuUs = double(cpuNs(daemon.pid) - cpu0) / 1000.0 / double(run.samples.size());
    return run;
}

} // namespace cmcp::bench
