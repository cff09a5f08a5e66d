#include "ThroughputBench.h"

#include "Daemon.h"
#include "LeanHttp.h"
#include "McpMessages.h"
#include "ProcStats.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <string>
#include <sys/epoll.h>
#include <unistd.h>
#include <vector>

namespace cmcp::bench {

namespace {

// One row of the throughput table: `sessions` sessions of `callsEach` calls each.
struct Throughput
{
    int sessions = 0;
    int callsEach = 0;
    long ok = 0;
    long failed = 0;
    double seconds = 0;
    Stats latency;
    double serverCpuUs = NAN;
    std::string firstError;
};

Throughput runThroughput(const Daemon &daemon, int sessions, int callsEach,
                         const Deadline &deadline)
{
    Throughput out;
    out.sessions = sessions;
    out.callsEach = callsEach;
    struct Client
    {
        HttpConn conn;
        std::string sessionId;
        int done = 0;
        long id = 0;
        Clock::time_point sent;
        bool active = false;
    };
    std::vector<Client> clients(static_cast<size_t>(sessions));
    auto fail = [&](const std::string &why) {
        if (out.firstError.empty())
            out.firstError = why;
    };
    const Deadline setup = deadline.capped(60);
    for (Client &client : clients) {
        std::string error;
        if (!client.conn.open(daemon.port)
            || !streamableHandshake(client.conn, daemon.port, client.sessionId, setup, &error)) {
            fail("session setup: " + (error.empty() ? std::string("cannot connect") : error));
            out.failed += callsEach;
            continue;
        }
        fcntl(client.conn.fd, F_SETFL, fcntl(client.conn.fd, F_GETFL) | O_NONBLOCK);
        client.active = true;
    }
    const int epoll = epoll_create1(EPOLL_CLOEXEC);
    int remaining = 0;
    std::vector<double> samples;
    samples.reserve(size_t(sessions) * size_t(callsEach));
    const Deadline run = deadline.capped(120);
    auto sendNext = [&](Client &client) {
        client.id += 1;
        client.sent = Clock::now();
        return writeAll(client.conn.fd,
                        httpPost(daemon.port, "/mcp", callBody(client.id), client.sessionId),
                        run.capped(5));
    };
    auto retire = [&](Client &client, bool failedRest) {
        if (failedRest)
            out.failed += callsEach - client.done;
        client.active = false;
        epoll_ctl(epoll, EPOLL_CTL_DEL, client.conn.fd, nullptr);
        --remaining;
    };
    const qint64 cpu0 = cpuNs(daemon.pid);
    const auto start = Clock::now();
    for (size_t i = 0; i < clients.size(); ++i) {
        Client &client = clients[i];
        if (!client.active)
            continue;
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.u64 = i;
        epoll_ctl(epoll, EPOLL_CTL_ADD, client.conn.fd, &event);
        ++remaining;
        if (!sendNext(client)) {
            fail("send failed");
            retire(client, true);
        }
    }
    std::vector<epoll_event> events(256);
    while (remaining > 0 && !run.passed()) {
        const int ready =
                epoll_wait(epoll, events.data(), int(events.size()), std::min(run.msLeft(), 1000));
        if (ready < 0 && errno != EINTR)
            break;
        for (int e = 0; e < ready; ++e) {
            Client &client = clients[events[size_t(e)].data.u64];
            if (!client.active)
                continue;
            bool closed = false;
            for (;;) {
                char chunk[65536];
                const ssize_t n = ::read(client.conn.fd, chunk, sizeof chunk);
                if (n > 0) {
                    client.conn.buffer.append(chunk, size_t(n));
                    continue;
                }
                if (n < 0 && errno == EINTR)
                    continue;
                closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
                break;
            }
            HttpResponse response;
            size_t used;
            while (client.active && (used = parseResponse(client.conn.buffer, response)) > 0) {
                client.conn.buffer.erase(0, used);
                const double us = usBetween(client.sent, Clock::now());
                if (response.status != 200 || !callAnswered(response.body, client.id)) {
                    fail("HTTP " + std::to_string(response.status) + ": "
                         + response.body.substr(0, 200));
                    ++out.failed;
                } else {
                    samples.push_back(us);
                    ++out.ok;
                }
                ++client.done;
                if (client.done >= callsEach) {
                    retire(client, false);
                } else if (!sendNext(client)) {
                    fail("send failed");
                    retire(client, true);
                }
            }
            if (closed && client.active) {
                fail("the daemon closed a connection");
                retire(client, true);
            }
        }
    }
    out.seconds = usBetween(start, Clock::now()) / 1e6;
    if (out.ok > 0)
        out.serverCpuUs = double(cpuNs(daemon.pid) - cpu0) / 1000.0 / double(out.ok + out.failed);
    for (Client &client : clients) {
        if (client.active) {
            fail("timed out");
            out.failed += callsEach - client.done;
            client.active = false;
        }
    }
    close(epoll);
    out.latency = statsOf(std::move(samples));
    // End the sessions (not timed): one DELETE each on a fresh keep-alive connection.
    HttpConn cleanup;
    if (cleanup.open(daemon.port)) {
        const Deadline end = deadline.capped(30);
        for (Client &client : clients) {
            HttpResponse response;
            if (!client.sessionId.empty()
                && !cleanup.roundTrip(httpDelete(daemon.port, client.sessionId), response, end))
                break;
        }
    }
    return out;
}

} // namespace

PartOutcome runThroughputPart(const Options &o, const Deadline &deadline)
{
    Daemon daemon;
    std::string error;
    if (!daemon.spawn(o, false, &error)) {
        std::fprintf(stderr, "cmcp-bench: %s\n", error.c_str());
        return PartOutcome::CouldNotStart;
    }
    bool failed = false;
    std::printf("## Throughput: concurrent Streamable HTTP sessions, one connection each, "
                "closed loop\n\n");
    std::printf("| sessions | calls each | calls ok | failed | seconds | calls/s | p50 µs | "
                "p99 µs | max µs | daemon CPU µs/call |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int sessions : o.concurrency) {
        if (deadline.passed())
            break;
        note("throughput with %d sessions × %d calls", sessions, o.callsPerSession);
        const Throughput t = runThroughput(daemon, sessions, o.callsPerSession, deadline);
        std::printf("| %d | %d | %ld | %ld | %s | %s | %s | %s | %s | %s |\n", t.sessions,
                    t.callsEach, t.ok, t.failed, num(t.seconds, 2).c_str(),
                    num(double(t.ok) / t.seconds, 0).c_str(), num(t.latency.p50).c_str(),
                    num(t.latency.p99).c_str(), num(t.latency.max).c_str(),
                    num(t.serverCpuUs).c_str());
        if (t.failed > 0 || t.ok != long(t.sessions) * t.callsEach) {
            std::printf("\nFAILED: %ld failed calls with %d sessions; first: %s\n\n", t.failed,
                        t.sessions, t.firstError.c_str());
            failed = true;
        }
        std::fflush(stdout);
    }
    std::printf("\nThe client is one epoll loop in this process (it shares the 2 CPUs with the "
                "daemon); latency is per call, from send to complete response.\n\n");
    return failed ? PartOutcome::Failed : PartOutcome::Passed;
}

} // namespace cmcp::bench
