// cmcp-bench: latency, throughput and idle-memory benchmarks of cmcpd (see BENCHMARKS.md).
//
//   core        tools/call of a trivial tool through McpServer in this process: parse → dispatch →
//               serialize, no transport ("inside the server" time).
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

#include "ConformanceFixtures.h"
#include "Exchange.h"
#include "JsonRpc.h"
#include "McpServer.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QtGlobal>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <poll.h>
#include <set>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double usBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::micro>(b - a).count();
}

void note(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    std::fputs("[cmcp-bench] ", stderr);
    std::vfprintf(stderr, format, args);
    std::fputc('\n', stderr);
    va_end(args);
}

struct Deadline
{
    Clock::time_point end;
    static Deadline in(double seconds)
    {
        return {Clock::now() + std::chrono::microseconds(qint64(seconds * 1e6))};
    }
    bool passed() const { return Clock::now() >= end; }
    int msLeft() const
    {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
        return int(std::clamp<qint64>(left, 0, 1000000));
    }
    // The earlier of this deadline and one `seconds` from now.
    Deadline capped(double seconds) const
    {
        const Deadline other = in(seconds);
        return other.end < end ? other : *this;
    }
};

// ---------------------------------------------------------------- statistics

struct Stats
{
    size_t n = 0;
    double p50 = NAN, p99 = NAN, mean = NAN, max = NAN;
};

Stats statsOf(std::vector<double> samples)
{
    Stats s;
    s.n = samples.size();
    if (samples.empty())
        return s;
    std::sort(samples.begin(), samples.end());
    auto rank = [&](double q) {
        const size_t r = size_t(std::ceil(q * double(samples.size())));
        return samples[std::min(samples.size() - 1, r == 0 ? 0 : r - 1)];
    };
    s.p50 = rank(0.50);
    s.p99 = rank(0.99);
    double sum = 0;
    for (double v : samples)
        sum += v;
    s.mean = sum / double(samples.size());
    s.max = samples.back();
    return s;
}

double median(std::vector<double> values)
{
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
    if (values.empty())
        return NAN;
    std::sort(values.begin(), values.end());
    const size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::string num(double v, int decimals = 1)
{
    if (std::isnan(v))
        return "–";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
    return buffer;
}

// ---------------------------------------------------------------- options

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
    int idleCycles = 2; // open/close cycles in the memory part; growth after the first hints at a leak
    bool idleStreamable = true;
    long daemonNofile = 0; // 0: the daemon inherits this process's (raised) limit
    double maxSeconds = 600; // hard bound on the whole run
    double idleWatchSeconds = 1; // how long the memory part watches the daemon's CPU with the sessions idle
    std::vector<std::string> daemonSettings; // --set NAME=VALUE for every spawned daemon
    std::string cmcpd;
};

void usage()
{
    std::printf(
            "usage: cmcp-bench [options]\n"
            "  --parts LIST          comma-separated: core,floor,http,sse,stdio,throughput,memory (default all)\n"
            "  --n N                 sequential tools/call per transport and run (default 5000)\n"
            "  --core-n N            in-process tools/call per run (default 20000)\n"
            "  --warmup N            calls before measuring (default 200)\n"
"  --paced-us US         also measure calls US apart, as a slower client (the SDK) sends them; n/4 calls (default 1000, 0: off)\n"
            "  --repeat R            runs of each latency part, interleaved; medians are reported (default 3)\n"
            "  --concurrency LIST    concurrent Streamable HTTP sessions, e.g. 50,200 (default 50,200)\n"
            "  --calls K             calls per session in the throughput part (default 200)\n"
            "  --idle N              idle sessions for the memory part (default 1000)\n"
            "  --idle-cycles N       open/close cycles of the idle sessions (default 2; RSS is reported after each)\n"
            "  --no-idle-streamable  measure only legacy SSE sessions in the memory part\n"
            "  --daemon-nofile N     soft RLIMIT_NOFILE for the spawned daemon (default: inherit the raised limit)\n"
"  --idle-watch S        seconds the daemon's idle CPU is watched with the sessions open (default 1)\n"
            "  --daemon-set N=V      pass --set N=V to every spawned cmcpd (repeatable)\n"
            "  --max-seconds S       bound on the whole run (default 600)\n"
            "  --cmcpd PATH          daemon to spawn (default: ../../server/cmcpd beside this binary)\n");
}

std::vector<int> intList(const std::string &text)
{
    std::vector<int> out;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ','))
        if (!item.empty())
            out.push_back(std::atoi(item.c_str()));
    return out;
}

std::optional<Options> parseOptions(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        const size_t eq = arg.find('=');
        const bool flag = arg == "--no-idle-streamable" || arg == "--help" || arg == "-h";
        if (eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        } else if (!flag) {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "cmcp-bench: %s needs a value\n", arg.c_str());
                return std::nullopt;
            }
            value = argv[++i];
        }
        if (arg == "--help" || arg == "-h") {
            usage();
            std::exit(0);
        } else if (arg == "--parts") {
            o.parts.clear();
            std::stringstream stream(value);
            std::string item;
            while (std::getline(stream, item, ','))
                o.parts.insert(item);
        } else if (arg == "--n") {
            o.n = std::max(1, std::atoi(value.c_str()));
        } else if (arg == "--core-n") {
            o.coreN = std::max(1, std::atoi(value.c_str()));
        } else if (arg == "--warmup") {
            o.warmup = std::max(0, std::atoi(value.c_str()));
        } else if (arg == "--paced-us") {
            o.pacedUs = std::clamp(std::atoi(value.c_str()), 0, 100000);
        } else if (arg == "--repeat") {
            o.repeat = std::clamp(std::atoi(value.c_str()), 1, 50);
        } else if (arg == "--concurrency") {
            o.concurrency = intList(value);
        } else if (arg == "--calls") {
            o.callsPerSession = std::max(1, std::atoi(value.c_str()));
        } else if (arg == "--idle") {
            o.idleSessions = std::max(1, std::atoi(value.c_str()));
        } else if (arg == "--idle-cycles") {
            o.idleCycles = std::clamp(std::atoi(value.c_str()), 1, 20);
        } else if (arg == "--no-idle-streamable") {
            o.idleStreamable = false;
        } else if (arg == "--daemon-nofile") {
            o.daemonNofile = std::atol(value.c_str());
        } else if (arg == "--idle-watch") {
            o.idleWatchSeconds = std::clamp(std::atof(value.c_str()), 0.1, 120.0);
        } else if (arg == "--daemon-set") {
            o.daemonSettings.push_back(value);
        } else if (arg == "--max-seconds") {
            o.maxSeconds = std::max(1.0, std::atof(value.c_str()));
        } else if (arg == "--cmcpd") {
            o.cmcpd = value;
        } else {
            std::fprintf(stderr, "cmcp-bench: unknown option %s (see --help)\n", arg.c_str());
            return std::nullopt;
        }
    }
    return o;
}

// ---------------------------------------------------------------- /proc

// CPU time of every thread of `pid`, in nanoseconds (schedstat: time spent on the CPU).
qint64 cpuNs(pid_t pid)
{
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR *tasks = opendir(dir.c_str());
    if (!tasks)
        return -1;
    qint64 total = 0;
    while (dirent *entry = readdir(tasks)) {
        if (entry->d_name[0] == '.')
            continue;
        FILE *file = std::fopen((dir + "/" + entry->d_name + "/schedstat").c_str(), "r");
        if (!file)
            continue;
        long long ns = 0;
        if (std::fscanf(file, "%lld", &ns) == 1)
            total += ns;
        std::fclose(file);
    }
    closedir(tasks);
    return total;
}

long statusKb(pid_t pid, const char *field)
{
    FILE *file = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
    if (!file)
        return -1;
    char line[256];
    long kb = -1;
    const size_t length = std::strlen(field);
    while (std::fgets(line, sizeof line, file)) {
        if (std::strncmp(line, field, length) == 0 && line[length] == ':') {
            kb = std::atol(line + length + 1);
            break;
        }
    }
    std::fclose(file);
    return kb;
}

int threadCount(pid_t pid)
{
    return int(statusKb(pid, "Threads"));
}

// ---------------------------------------------------------------- the daemon

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

    bool spawn(const Options &o, bool stdio, std::string *error)
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
        std::vector<std::string> args{o.cmcpd, "--conformance-fixtures"};
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

    bool alive() const { return pid > 0 && kill(pid, 0) == 0; }

    void stop()
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
            for (int i = 0; i < 750 && !reaped; ++i) { // at most 15 s (a daemon under valgrind is slow to exit)
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
};

// ---------------------------------------------------------------- sockets and HTTP

int connectLocal(int port)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(quint16(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        close(fd);
        return -1;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

bool writeAll(int fd, const std::string &data, const Deadline &deadline)
{
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n > 0) {
            done += size_t(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            pollfd p{fd, POLLOUT, 0};
            if (poll(&p, 1, deadline.msLeft()) <= 0)
                return false;
            continue;
        }
        return false;
    }
    return true;
}

// Appends what is readable within the deadline. >0 bytes read, 0 end of stream, -1 error or timeout.
ssize_t readSome(int fd, std::string &buffer, const Deadline &deadline)
{
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        const int ready = poll(&p, 1, deadline.msLeft());
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return -1;
        char chunk[65536];
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n > 0)
            buffer.append(chunk, size_t(n));
        return n;
    }
}

std::string lower(std::string text)
{
    for (char &c : text)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

std::string headerValue(const std::string &head, const std::string &name)
{
    const std::string lowered = lower(head);
    const std::string needle = "\r\n" + lower(name) + ":";
    const size_t at = lowered.find(needle);
    if (at == std::string::npos)
        return {};
    size_t from = at + needle.size();
    const size_t end = head.find("\r\n", from);
    while (from < end && head[from] == ' ')
        ++from;
    return head.substr(from, end - from);
}

struct HttpResponse
{
    int status = 0;
    std::string head;
    std::string body;
};

// Decodes complete chunks of a chunked body from `raw` starting at `at`. Returns the offset after
// the last complete chunk; sets `ended` at the final zero-length chunk.
size_t decodeChunks(const std::string &raw, size_t at, std::string &out, bool &ended)
{
    while (!ended) {
        const size_t lineEnd = raw.find("\r\n", at);
        if (lineEnd == std::string::npos)
            break;
        const size_t size = std::strtoul(raw.c_str() + at, nullptr, 16);
        if (raw.size() < lineEnd + 2 + size + 2)
            break;
        out.append(raw, lineEnd + 2, size);
        at = lineEnd + 2 + size + 2;
        if (size == 0)
            ended = true;
    }
    return at;
}

// Returns the bytes a complete response takes at the start of `buffer`, 0 when incomplete.
size_t parseResponse(const std::string &buffer, HttpResponse &response)
{
    const size_t headEnd = buffer.find("\r\n\r\n");
    if (headEnd == std::string::npos)
        return 0;
    const size_t bodyStart = headEnd + 4;
    const std::string head = buffer.substr(0, headEnd + 2);
    int status = 0;
    if (std::sscanf(head.c_str(), "HTTP/1.%*d %d", &status) != 1)
        return 0;
    if (lower(headerValue(head, "transfer-encoding")) == "chunked") {
        std::string body;
        bool ended = false;
        const size_t end = decodeChunks(buffer, bodyStart, body, ended);
        if (!ended)
            return 0;
        response = {status, head, body};
        return end;
    }
    const size_t length = std::strtoul(headerValue(head, "content-length").c_str(), nullptr, 10);
    if (buffer.size() < bodyStart + length)
        return 0;
    response = {status, head, buffer.substr(bodyStart, length)};
    return bodyStart + length;
}

struct HttpConn
{
    int fd = -1;
    std::string buffer;

    HttpConn() = default;
    HttpConn(const HttpConn &) = delete;
    HttpConn &operator=(const HttpConn &) = delete;
    HttpConn(HttpConn &&other) noexcept : fd(std::exchange(other.fd, -1)), buffer(std::move(other.buffer)) {}
    ~HttpConn() { shut(); }

    bool open(int port)
    {
        shut();
        fd = connectLocal(port);
        return fd >= 0;
    }
    void shut()
    {
        if (fd >= 0)
            close(fd);
        fd = -1;
        buffer.clear();
    }
    bool readResponse(HttpResponse &response, const Deadline &deadline)
    {
        for (;;) {
            const size_t used = parseResponse(buffer, response);
            if (used > 0) {
                buffer.erase(0, used);
                return true;
            }
            if (readSome(fd, buffer, deadline) <= 0)
                return false;
        }
    }
    bool roundTrip(const std::string &request, HttpResponse &response, const Deadline &deadline)
    {
        return fd >= 0 && writeAll(fd, request, deadline) && readResponse(response, deadline);
    }
};

const char *const protocolVersion = "2025-11-25";

std::string hostHeader(int port)
{
    return "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
}

std::string httpPost(int port, const std::string &path, const std::string &body, const std::string &sessionId)
{
    std::string request = "POST " + path + " HTTP/1.1\r\n" + hostHeader(port)
            + "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    if (!sessionId.empty())
        request += "Mcp-Session-Id: " + sessionId + "\r\nMCP-Protocol-Version: " + protocolVersion + "\r\n";
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    return request;
}

std::string httpGet(int port, const std::string &path, const std::string &accept, const std::string &sessionId = {})
{
    std::string request = "GET " + path + " HTTP/1.1\r\n" + hostHeader(port) + "Accept: " + accept + "\r\n";
    if (!sessionId.empty())
        request += "Mcp-Session-Id: " + sessionId + "\r\nMCP-Protocol-Version: " + protocolVersion + "\r\n";
    return request + "\r\n";
}

std::string httpDelete(int port, const std::string &sessionId)
{
    return "DELETE /mcp HTTP/1.1\r\n" + hostHeader(port) + "Mcp-Session-Id: " + sessionId
            + "\r\nMCP-Protocol-Version: " + protocolVersion + "\r\nContent-Length: 0\r\n\r\n";
}

// ---------------------------------------------------------------- MCP messages

const std::string initializeBody = std::string(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":")")
        + protocolVersion + R"(","capabilities":{},"clientInfo":{"name":"cmcp-bench","version":"1"}}})";
const std::string initializedBody = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

std::string callBody(long id)
{
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id)
            + R"(,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}})";
}

std::string pingBody(long id)
{
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"ping"})";
}

bool hasId(const std::string &json, long id)
{
    const std::string needle = "\"id\":" + std::to_string(id);
    size_t at = 0;
    while ((at = json.find(needle, at)) != std::string::npos) {
        const size_t after = at + needle.size();
        if (after >= json.size() || !std::isdigit(static_cast<unsigned char>(json[after])))
            return true;
        at = after;
    }
    return false;
}

bool callAnswered(const std::string &json, long id)
{
    return hasId(json, id) && json.find("\"result\"") != std::string::npos
            && json.find("This is a simple text response for testing.") != std::string::npos;
}

// Streamable HTTP: initialize, then notifications/initialized; returns the session id.
bool streamableHandshake(HttpConn &conn, int port, std::string &sessionId, const Deadline &deadline, std::string *error)
{
    HttpResponse response;
    if (!conn.roundTrip(httpPost(port, "/mcp", initializeBody, {}), response, deadline) || response.status != 200) {
        *error = "initialize failed (HTTP " + std::to_string(response.status) + ")";
        return false;
    }
    sessionId = headerValue(response.head, "mcp-session-id");
    if (sessionId.empty() || !hasId(response.body, 0)) {
        *error = "initialize gave no Mcp-Session-Id";
        return false;
    }
    if (!conn.roundTrip(httpPost(port, "/mcp", initializedBody, sessionId), response, deadline) || response.status != 202) {
        *error = "notifications/initialized was not answered 202 (HTTP " + std::to_string(response.status) + ")";
        return false;
    }
    return true;
}

int healthSessions(int port, const Deadline &deadline)
{
    HttpConn conn;
    HttpResponse response;
    if (!conn.open(port) || !conn.roundTrip(httpGet(port, "/health", "application/json"), response, deadline)
        || response.status != 200 || response.body.find("\"status\":\"ok\"") == std::string::npos)
        return -1;
    const size_t at = response.body.find("\"sessions\":");
    return at == std::string::npos ? -1 : std::atoi(response.body.c_str() + at + 11);
}

// One SSE response: the chunked body of a GET decoded incrementally into events.
struct SseReader
{
    int fd = -1;
    std::string raw;
    std::string text;
    bool headDone = false;
    bool ended = false;
    int status = 0;

    SseReader() = default;
    SseReader(const SseReader &) = delete;
    SseReader &operator=(const SseReader &) = delete;
    SseReader(SseReader &&other) noexcept
        : fd(std::exchange(other.fd, -1)), raw(std::move(other.raw)), text(std::move(other.text)),
          headDone(other.headDone), ended(other.ended), status(other.status)
    {
    }
    ~SseReader() { shut(); }
    void shut()
    {
        if (fd >= 0)
            close(fd);
        fd = -1;
    }

    bool open(int port, const std::string &request, const Deadline &deadline)
    {
        fd = connectLocal(port);
        return fd >= 0 && writeAll(fd, request, deadline) && readHead(deadline);
    }

    bool readHead(const Deadline &deadline)
    {
        while (!headDone) {
            const size_t end = raw.find("\r\n\r\n");
            if (end != std::string::npos) {
                std::sscanf(raw.c_str(), "HTTP/1.%*d %d", &status);
                raw.erase(0, end + 4);
                headDone = true;
                break;
            }
            if (readSome(fd, raw, deadline) <= 0)
                return false;
        }
        return status == 200;
    }

    // The next event other than comments (keep-alives).
    bool next(std::string &event, std::string &data, const Deadline &deadline)
    {
        if (!readHead(deadline))
            return false;
        for (;;) {
            const size_t used = decodeChunks(raw, 0, text, ended);
            raw.erase(0, used);
            size_t end;
            while ((end = text.find("\n\n")) != std::string::npos) {
                const std::string block = text.substr(0, end + 1);
                text.erase(0, end + 2);
                event = "message";
                data.clear();
                bool any = false;
                std::stringstream lines(block);
                std::string line;
                while (std::getline(lines, line)) {
                    if (line.rfind("event:", 0) == 0) {
                        event = line.substr(line.size() > 6 && line[6] == ' ' ? 7 : 6);
                        any = true;
                    } else if (line.rfind("data:", 0) == 0) {
                        if (any && !data.empty())
                            data += '\n';
                        data += line.substr(line.size() > 5 && line[5] == ' ' ? 6 : 5);
                        any = true;
                    }
                }
                if (any)
                    return true;
            }
            if (ended || readSome(fd, raw, deadline) <= 0)
                return false;
        }
    }
};

// A legacy SSE session: its stream, and a keep-alive connection for the POSTs.
struct SseSession
{
    SseReader stream;
    std::string endpoint;

    bool open(int port, const Deadline &deadline, std::string *error)
    {
        if (!stream.open(port, httpGet(port, "/sse", "text/event-stream"), deadline)) {
            *error = "GET /sse failed (HTTP " + std::to_string(stream.status) + ")";
            return false;
        }
        std::string event;
        if (!stream.next(event, endpoint, deadline) || event != "endpoint") {
            *error = "no endpoint event on /sse";
            return false;
        }
        return true;
    }

    // POSTs `body` and, when `id` >= 0, reads the reply with that id off the stream.
    bool send(HttpConn &post, int port, const std::string &body, long id, std::string *reply, const Deadline &deadline,
              std::string *error)
    {
        HttpResponse response;
        if (!post.roundTrip(httpPost(port, endpoint, body, {}), response, deadline) || response.status != 202) {
            *error = "POST " + endpoint + " was not accepted (HTTP " + std::to_string(response.status) + ")";
            return false;
        }
        if (id < 0)
            return true;
        std::string event, data;
        while (stream.next(event, data, deadline)) {
            if (event == "message" && hasId(data, id)) {
                if (reply)
                    *reply = data;
                return true;
            }
        }
        *error = "no reply to id " + std::to_string(id) + " on the stream";
        return false;
    }

    bool handshake(HttpConn &post, int port, const Deadline &deadline, std::string *error)
    {
        return send(post, port, initializeBody, 0, nullptr, deadline, error)
                && send(post, port, initializedBody, -1, nullptr, deadline, error);
    }
};

// ---------------------------------------------------------------- latency rows

struct Run
{
    std::vector<double> samples; // µs
    double serverCpuUs = NAN; // the daemon's CPU time per call
    std::string error;
};

struct Row
{
    Row(std::string name, std::string client) : name(std::move(name)), client(std::move(client)) {}
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

// ---------------------------------------------------------------- core (in process)

class NullChannel : public cmcp::SessionChannel
{
public:
    void sendUnrelated(const QJsonObject &) override {}
};

class SinkExchange : public cmcp::Exchange
{
public:
    explicit SinkExchange(QByteArray *sink) : m_sink(sink) {}
    void sendRelated(const QJsonObject &) override {}
    void complete(const QJsonValue &responses) override
    {
        if (!responses.isUndefined())
            *m_sink = cmcp::jsonrpc::serialize(responses);
    }

private:
    QByteArray *m_sink;
};

struct CoreRuns
{
    Run total, parse, dispatch, ping;
};

CoreRuns runCore(int n, int warmup, const Deadline &deadline)
{
    CoreRuns out;
    NullChannel channel;
    cmcp::McpServer mcp(cmcp::ServerIdentity{});
    cmcp::registerConformanceFixtures(mcp);
    const std::shared_ptr<cmcp::Session> session = mcp.openSession(QStringLiteral("bench"), &channel);
    QByteArray sink;
    auto feed = [&](const std::string &body) {
        sink.clear();
        return mcp.handlePayload(session, cmcp::jsonrpc::parsePayload(QByteArray::fromStdString(body)),
                                 std::make_shared<SinkExchange>(&sink));
    };
    feed(initializeBody);
    feed(initializedBody);
    if (!session->isInitialized()) {
        out.total.error = "in-process initialize failed";
        return out;
    }
    for (int i = 1; i <= warmup; ++i)
        feed(callBody(i));

    out.total.samples.reserve(size_t(n));
    out.parse.samples.reserve(size_t(n));
    out.dispatch.samples.reserve(size_t(n));
    for (long i = 1; i <= n && !deadline.passed(); ++i) {
        const QByteArray bytes = QByteArray::fromStdString(callBody(i));
        sink.clear();
        const auto t0 = Clock::now();
        const cmcp::jsonrpc::Payload payload = cmcp::jsonrpc::parsePayload(bytes);
        const auto t1 = Clock::now();
        mcp.handlePayload(session, payload, std::make_shared<SinkExchange>(&sink));
        const auto t2 = Clock::now();
        if (!callAnswered(sink.toStdString(), i)) {
            out.total.error = "in-process tools/call gave: " + sink.toStdString();
            break;
        }
        out.parse.samples.push_back(usBetween(t0, t1));
        out.dispatch.samples.push_back(usBetween(t1, t2));
        out.total.samples.push_back(usBetween(t0, t2));
    }
    out.ping.samples.reserve(size_t(n));
    for (long i = 1; i <= n && !deadline.passed(); ++i) {
        const QByteArray bytes = QByteArray::fromStdString(pingBody(i));
        sink.clear();
        const auto t0 = Clock::now();
        mcp.handlePayload(session, cmcp::jsonrpc::parsePayload(bytes), std::make_shared<SinkExchange>(&sink));
        const auto t1 = Clock::now();
        if (!hasId(sink.toStdString(), i) || !sink.contains("\"result\"")) {
            out.ping.error = "in-process ping gave: " + sink.toStdString();
            break;
        }
        out.ping.samples.push_back(usBetween(t0, t1));
    }
    return out;
}

// ---------------------------------------------------------------- floors

// The lean HTTP client against a socket that answers every request at once with a fixed
// response of a tools/call's size: loopback TCP plus the client, no server work.
Run runTcpFloor(int n, int warmup, const Deadline &deadline)
{
    Run run;
    const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener < 0 || bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
        || listen(listener, 4) != 0 || getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
        run.error = "floor: cannot listen";
        if (listener >= 0)
            close(listener);
        return run;
    }
    const int port = ntohs(address.sin_port);
    const std::string body = R"({"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"This is a simple text response for testing.","type":"text"}]}})";
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: "
                               "0123456789abcdef0123456789abcdef\r\nContent-Length: "
            + std::to_string(body.size()) + "\r\n\r\n" + body;
    std::thread server([listener, answer, deadline] {
        pollfd p{listener, POLLIN, 0};
        if (poll(&p, 1, deadline.capped(10).msLeft()) <= 0)
            return;
        const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::string in;
        for (;;) {
            const size_t headEnd = in.find("\r\n\r\n");
            if (headEnd != std::string::npos) {
                const size_t length = std::strtoul(headerValue(in.substr(0, headEnd + 2), "content-length").c_str(), nullptr, 10);
                if (in.size() >= headEnd + 4 + length) {
                    in.erase(0, headEnd + 4 + length);
                    if (!writeAll(fd, answer, deadline.capped(10)))
                        break;
                    continue;
                }
            }
            if (readSome(fd, in, deadline.capped(10)) <= 0)
                break;
        }
        close(fd);
    });
    HttpConn conn;
    if (conn.open(port)) {
        HttpResponse response;
        const Deadline each = deadline.capped(30);
        for (int i = 0; i < warmup + n && !each.passed(); ++i) {
            const std::string request = httpPost(port, "/mcp", callBody(1), "0123456789abcdef0123456789abcdef");
            const auto t0 = Clock::now();
            if (!conn.roundTrip(request, response, each.capped(5)) || response.status != 200) {
                run.error = "floor: round trip failed";
                break;
            }
            if (i >= warmup)
                run.samples.push_back(usBetween(t0, Clock::now()));
        }
    } else {
        run.error = "floor: cannot connect";
    }
    conn.shut();
    server.join();
    close(listener);
    return run;
}

// A line through /bin/cat: two pipes, two processes, no server work.
Run runPipeFloor(int n, int warmup, const Deadline &deadline)
{
    Run run;
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
        run.error = "pipe failed";
        return run;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        char cat[] = "/bin/cat";
        char *argv[] = {cat, nullptr};
        execv(cat, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    std::string buffer;
    const std::string line = callBody(1) + "\n";
    const Deadline each = deadline.capped(30);
    for (int i = 0; pid > 0 && i < warmup + n && !each.passed(); ++i) {
        const auto t0 = Clock::now();
        if (!writeAll(in[1], line, each.capped(5))) {
            run.error = "cat: write failed";
            break;
        }
        size_t newline;
        bool ok = true;
        while ((newline = buffer.find('\n')) == std::string::npos && (ok = readSome(out[0], buffer, each.capped(5)) > 0)) {
        }
        if (!ok) {
            run.error = "cat: read failed";
            break;
        }
        buffer.erase(0, newline + 1);
        if (i >= warmup)
            run.samples.push_back(usBetween(t0, Clock::now()));
    }
    close(in[1]);
    close(out[0]);
    if (pid > 0)
        waitpid(pid, nullptr, 0);
    return run;
}

// ---------------------------------------------------------------- transports against cmcpd

Run runStreamable(const Daemon &daemon, int n, int warmup, int thinkUs, const Deadline &deadline)
{
    Run run;
    HttpConn conn;
    std::string sessionId;
    const Deadline setup = deadline.capped(10);
    if (!conn.open(daemon.port) || !streamableHandshake(conn, daemon.port, sessionId, setup, &run.error))
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
        if (!conn.roundTrip(request, response, each.capped(5)) || response.status != 200 || !callAnswered(response.body, i)) {
            run.error = "http: call " + std::to_string(i) + " failed (HTTP " + std::to_string(response.status) + ")";
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
        if (!session.send(post, daemon.port, body, i, &reply, each.capped(5), &run.error) || !callAnswered(reply, i)) {
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
    if (!exchange(initializeBody, 0, nullptr, setup) || !exchange(initializedBody, -1, nullptr, setup)) {
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

// ---------------------------------------------------------------- throughput

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

Throughput runThroughput(const Daemon &daemon, int sessions, int callsEach, const Deadline &deadline)
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
        if (!client.conn.open(daemon.port) || !streamableHandshake(client.conn, daemon.port, client.sessionId, setup, &error)) {
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
        return writeAll(client.conn.fd, httpPost(daemon.port, "/mcp", callBody(client.id), client.sessionId), run.capped(5));
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
        const int ready = epoll_wait(epoll, events.data(), int(events.size()), std::min(run.msLeft(), 1000));
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
                    fail("HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 200));
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
            if (!client.sessionId.empty() && !cleanup.roundTrip(httpDelete(daemon.port, client.sessionId), response, end))
                break;
        }
    }
    return out;
}

// ---------------------------------------------------------------- idle memory

Stats statusOf(const Run &run)
{
    return run.samples.empty() ? Stats{} : statsOf(run.samples);
}

struct Memory
{
    std::string kind;
    int wanted = 0;
    int opened = 0;
    long rssBefore = -1, rssOpen = -1, rssAfterClose = -1, rssAfterLast = -1; // kB
    std::vector<long> rssPerCycle; // after each close
    int threadsBefore = -1, threadsOpen = -1;
    int sessionsReported = -1; // /health while open
    double idleCpuMsPerS = NAN; // the daemon's CPU use while the sessions sit idle
    Stats callAlone, callBusy; // sequential Streamable HTTP calls with no other session / with the idle ones open
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
                    *error = "session " + std::to_string(i) + ": " + (error->empty() ? "cannot connect" : *error) + busy();
                    break;
                }
                ids.push_back(sessionId);
                SseReader stream;
                stream.fd = std::exchange(conn.fd, -1);
                if (!writeAll(stream.fd, httpGet(port, "/mcp", "text/event-stream", sessionId), each) || !stream.readHead(each)) {
                    *error = "GET stream " + std::to_string(i) + " refused (HTTP " + std::to_string(stream.status) + ")" + busy();
                    break;
                }
                getStreams.push_back(std::move(stream));
            } else {
                SseSession session;
                if (!session.open(port, each, error) || !session.handshake(post, port, each, error)) {
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
    out.kind = streamable ? "Streamable HTTP session + GET stream" : "legacy SSE stream (initialized session)";
    out.wanted = o.idleSessions;
    Daemon daemon;
    if (!daemon.spawn(o, false, &out.error))
        return out;
    const int port = daemon.port;
    // Warm the code paths once, so the baseline holds what any first session would allocate.
    {
        IdleSessions warm{port, streamable, daemon.pid, {}, {}, {}};
        std::string error;
        if (warm.open(1, deadline.capped(10), &error) != 1 || !warm.close(deadline) || !oneCall(port, deadline.capped(10))) {
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
    out.idleCpuMsPerS = double(cpuNs(daemon.pid) - cpu0) / 1e6 / (usBetween(idleStart, Clock::now()) / 1e6);
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
    for (int cycle = 2; cycle <= o.idleCycles && out.error.empty() && drained && !deadline.passed(); ++cycle) {
        std::string error;
        const int again = idle.open(o.idleSessions, deadline.capped(120), &error);
        drained = idle.close(deadline);
        usleep(300000);
        out.rssPerCycle.push_back(statusKb(daemon.pid, "VmRSS"));
        if (again != o.idleSessions && out.error.empty())
            out.error = "cycle " + std::to_string(cycle) + ": " + error;
    }
    out.rssAfterLast = out.rssPerCycle.back();
    const bool callWorks = oneCall(port, deadline.capped(10));
    out.healthyAfter = drained && callWorks && healthSessions(port, deadline.capped(5)) == 0 && daemon.alive();
    if (!drained && out.error.empty())
        out.error = "sessions were not released after closing";
    return out;
}

// ---------------------------------------------------------------- output

void printLatencyTable(const std::vector<Row> &rows, int repeat)
{
    std::printf("| path | client | calls/run | p50 µs | p99 µs | mean µs | daemon CPU µs/call | p50 of each run |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---|\n");
    for (const Row &row : rows) {
        if (row.runs.empty()) {
            std::printf("| %s | %s | – | – | – | – | – | %s |\n", row.name.c_str(), row.client.c_str(),
                        row.errors.empty() ? "not run" : ("FAILED: " + row.errors.front()).c_str());
            continue;
        }
        std::string each;
        for (const Stats &s : row.runs)
            each += (each.empty() ? "" : " / ") + num(s.p50);
        const int decimals = row.medianOf(&Stats::p50) < 10 ? 2 : 1;
        std::printf("| %s | %s | %zu | %s | %s | %s | %s | %s |\n", row.name.c_str(), row.client.c_str(), row.runs.front().n,
                    num(row.medianOf(&Stats::p50), decimals).c_str(), num(row.medianOf(&Stats::p99), decimals).c_str(),
                    num(row.medianOf(&Stats::mean), decimals).c_str(), num(median(row.cpu)).c_str(), each.c_str());
        if (!row.errors.empty())
            std::printf("|   ↳ %zu of %d runs failed: %s | | | | | | | |\n", row.errors.size(), repeat, row.errors.front().c_str());
    }
    std::printf("\nMedians over %d run(s); µs = microseconds; \"daemon CPU\" is the spawned cmcpd's own CPU time "
                "(all threads, /proc/PID/task/*/schedstat) divided by the calls.\n\n",
                repeat);
}

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
        o.cmcpd = QCoreApplication::applicationDirPath().toStdString() + "/../../server/cmcpd";
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
    const long maxConcurrency = o.concurrency.empty() ? 0 : *std::max_element(o.concurrency.begin(), o.concurrency.end());
    const long needed = 2L * o.idleSessions + 2L * maxConcurrency + 64;
    if (long(nofile.rlim_cur) < needed)
        note("warning: RLIMIT_NOFILE is %ld, fewer than the %ld descriptors this run may need", long(nofile.rlim_cur), needed);

    const Deadline deadline = Deadline::in(o.maxSeconds);
    bool failed = false;
    std::string settings;
    for (const std::string &setting : o.daemonSettings)
        settings += " --set " + setting;
    std::printf("# cmcp-bench\n\nMachine: %s. Daemon: %s%s. RLIMIT_NOFILE %ld (daemon: %s).\n\n", machineLine().c_str(),
                o.cmcpd.c_str(), settings.c_str(), long(nofile.rlim_cur),
                o.daemonNofile > 0 ? std::to_string(o.daemonNofile).c_str() : "inherited");
    std::fflush(stdout);

    // ---- latency: every part once per repetition, interleaved, so that noise spreads evenly
    Row coreTotal{"in-process tools/call test_simple_text (parse+dispatch+serialize)", "none"};
    Row coreParse{"  ↳ of which jsonrpc::parsePayload", "none"};
    Row coreDispatch{"  ↳ of which McpServer::handlePayload (dispatch, tool, serialize)", "none"};
    Row corePing{"in-process ping (parse+dispatch+serialize)", "none"};
    Row tcpFloor{"floor: loopback TCP, fixed HTTP answer (no server work)", "lean socket"};
    Row pipeFloor{"floor: a line through /bin/cat (no server work)", "lean pipe"};
    Row http{"cmcpd Streamable HTTP POST /mcp", "lean socket, keep-alive"};
    Row sse{"cmcpd legacy SSE (POST 202 + event on stream)", "lean socket, keep-alive"};
    Row stdio{"cmcpd stdio (line in, line out)", "lean pipe"};
    const std::string pace = o.pacedUs >= 1000 && o.pacedUs % 1000 == 0 ? std::to_string(o.pacedUs / 1000) + " ms"
                                                                       : std::to_string(o.pacedUs) + " µs";
    Row httpPaced{"cmcpd Streamable HTTP, calls " + pace + " apart", "lean socket, keep-alive"};
    Row ssePaced{"cmcpd legacy SSE, calls " + pace + " apart", "lean socket, keep-alive"};
    Row stdioPaced{"cmcpd stdio, calls " + pace + " apart", "lean pipe"};
    const int pacedN = std::max(100, o.n / 4);
    const bool latencyParts = o.parts.count("core") || o.parts.count("floor") || o.parts.count("http")
            || o.parts.count("sse") || o.parts.count("stdio");
    if (latencyParts) {
        Daemon daemon;
        std::string error;
        if ((o.parts.count("http") || o.parts.count("sse")) && !daemon.spawn(o, false, &error)) {
            std::fprintf(stderr, "cmcp-bench: %s\n", error.c_str());
            return 1;
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
        for (const Row &row : rows)
            failed = failed || !row.errors.empty();
        std::printf("## Latency of one tools/call (test_simple_text), sequential\n\n");
        printLatencyTable(rows, o.repeat);
        std::fflush(stdout);
    }

    // ---- throughput
    if (o.parts.count("throughput") && !deadline.passed()) {
        Daemon daemon;
        std::string error;
        if (!daemon.spawn(o, false, &error)) {
            std::fprintf(stderr, "cmcp-bench: %s\n", error.c_str());
            return 1;
        }
        std::printf("## Throughput: concurrent Streamable HTTP sessions, one connection each, closed loop\n\n");
        std::printf("| sessions | calls each | calls ok | failed | seconds | calls/s | p50 µs | p99 µs | max µs | daemon CPU µs/call |\n");
        std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int sessions : o.concurrency) {
            if (deadline.passed())
                break;
            note("throughput with %d sessions × %d calls", sessions, o.callsPerSession);
            const Throughput t = runThroughput(daemon, sessions, o.callsPerSession, deadline);
            std::printf("| %d | %d | %ld | %ld | %s | %s | %s | %s | %s | %s |\n", t.sessions, t.callsEach, t.ok, t.failed,
                        num(t.seconds, 2).c_str(), num(double(t.ok) / t.seconds, 0).c_str(), num(t.latency.p50).c_str(),
                        num(t.latency.p99).c_str(), num(t.latency.max).c_str(), num(t.serverCpuUs).c_str());
            if (t.failed > 0 || t.ok != long(t.sessions) * t.callsEach) {
                std::printf("\nFAILED: %ld failed calls with %d sessions; first: %s\n\n", t.failed, t.sessions,
                            t.firstError.c_str());
                failed = true;
            }
            std::fflush(stdout);
        }
        std::printf("\nThe client is one epoll loop in this process (it shares the 2 CPUs with the daemon); "
                    "latency is per call, from send to complete response.\n\n");
    }

    // ---- idle memory
    if (o.parts.count("memory") && !deadline.passed()) {
        std::printf("## Idle memory: a fresh cmcpd, VmRSS before and after opening %d idle sessions\n\n", o.idleSessions);
        std::printf("| kind | opened | open took s | RSS before MB | RSS open MB | delta MB | KB/session | daemon CPU idle ms/s | "
                    "threads | /health sessions | RSS after each close MB | healthy after |\n");
        std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|\n");
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
            std::printf("| %s | %d/%d | %s | %s | %s | %s | %s | %s | %d → %d | %d | %s | %s |\n", m.kind.c_str(), m.opened,
                        m.wanted, num(m.openSeconds, 2).c_str(), num(double(m.rssBefore) / 1024.0).c_str(),
                        num(double(m.rssOpen) / 1024.0).c_str(), num(delta).c_str(),
                        num(m.opened > 0 ? double(m.rssOpen - m.rssBefore) / double(m.opened) : NAN).c_str(),
                        num(m.idleCpuMsPerS).c_str(), m.threadsBefore, m.threadsOpen, m.sessionsReported,
                        cycles.c_str(),
                        m.healthyAfter ? "yes" : "NO");
            calls += "| " + m.kind + " | " + num(m.callAlone.p50) + " | " + num(m.callAlone.p99) + " | " + num(m.cpuAlone) + " | "
                    + std::to_string(m.opened) + " | " + num(m.callBusy.p50) + " | " + num(m.callBusy.p99) + " | "
                    + num(m.cpuBusy) + " |\n";
            if (!m.error.empty() || m.opened != m.wanted || !m.healthyAfter) {
                std::printf("\nFAILED (%s): %s\n\n", m.kind.c_str(), m.error.empty() ? "see the row above" : m.error.c_str());
                failed = true;
            }
            std::fflush(stdout);
        }
        std::printf("\nA Streamable HTTP tools/call on the same daemon, 2000 sequential calls, before the idle sessions are "
                    "opened and while they are open:\n\n");
        std::printf("| idle kind | alone p50 µs | alone p99 µs | alone daemon CPU µs/call | idle sessions open | "
                    "p50 µs | p99 µs | daemon CPU µs/call |\n|---|---:|---:|---:|---:|---:|---:|---:|\n%s",
                    calls.c_str());
        std::printf("\n\"healthy after\": after closing, /health answers with 0 sessions and a new session's tools/call works. "
                    "Target: 1,000 idle sessions add under 50 MB.\n\n");
    }

    if (deadline.passed()) {
        std::printf("Stopped at the --max-seconds bound (%.0f s): some parts are incomplete.\n", o.maxSeconds);
        failed = true;
    }
    return failed ? 1 : 0;
}
