// system_run_command and system_run_python end to end over /mcp against the bare programs, in one
// run and interleaved (bare, tool, bare, tool, ...), so both sides see the same machine noise:
//   system_run_command {"command":"echo hi"}  vs  bash -c 'echo hi'
//   system_run_python  {"code":"print(1)"}    vs  python3 -I -S -c 'print(1)'
// The client is a single keep-alive HTTP/1.1 connection written here (no SDK: see
// docs/benchmarks.md for what the SDK adds), the bare programs are started with posix_spawn and
// their output read to the end. A third column runs the same program under cmcp-jail alone, with
// the policy the daemon uses (cmcpd --print-job-policies), started the same way: the difference
// between it and the tool is the daemon's share (HTTP, JSON, the supervisor, the Python runner),
// the difference between it and the bare program the jail's.
//
//   cmcp-system-bench [--cmcpd PATH] [--n N] [--warmup W] [--gap-ms G] [--sessions S]
//                     [--seconds T]
//
// Two daemons run side by side, measured in the same rounds: one with the defaults (a jail built
// per call, BASH_WARM_JOBS and PYTHON_WARM_JOBS starting it ahead) and one with
// JOB_CALL_TEMPLATES=true (calls forked from a template). After the rounds:
// - CPU per call: the CPU time of every process a call involves (the daemon, the jails it
//   started and reaped, the templates' monitors, helpers, shepherds and the calls themselves,
//   all accounted to the daemon or to a template process they were reaped by) over N more
//   `echo hi` calls, divided by N;
// - throughput: S sessions (default 8), each on its own connection, calling `echo hi` in a loop
//   for T seconds (default 5), against `bash -c 'echo hi'` spawned by S threads;
// - floors: a subshell forked from a running bash (`(exit)` in a loop), per fork.
//
// After each tool call the bench pauses G ms (default 80) before it measures anything else: the
// daemon starts the replacement of a pre-started job (BASH_WARM_JOBS, PYTHON_WARM_JOBS) right
// after a call, and on two cores that start would otherwise slow the next measurement, bare or
// not. Real clients pause between calls too; the pause is never inside a measurement.
//
// Needs root (the jobs switch to host uids 120300..120316 and 120320..120335).
#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string &message)
{
    std::fprintf(stderr, "cmcp-system-bench: %s\n", message.c_str());
    std::exit(1);
}

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Stats
{
    double median = 0, p99 = 0, mean = 0;
};

Stats statsOf(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    Stats stats;
    const size_t n = samples.size();
    stats.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    stats.p99 = samples[std::min(n - 1, size_t(std::ceil(n * 0.99)) - 1)];
    for (double s : samples)
        stats.mean += s / double(n);
    return stats;
}

// Runs argv to its end with stdin /dev/null, returns its stdout. With a policy, the policy is
// readable on descriptor 3 (for cmcp-jail --policy-fd 3).
std::string runBare(const std::vector<const char *> &argv, const std::string &policy = {})
{
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        die("pipe2");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    int policyPipe[2] = {-1, -1};
    if (!policy.empty()) {
        if (pipe2(policyPipe, O_CLOEXEC) != 0
            || write(policyPipe[1], policy.data(), policy.size()) != ssize_t(policy.size()))
            die("policy pipe");
        close(policyPipe[1]);
        posix_spawn_file_actions_adddup2(&actions, policyPipe[0], 3);
    }
    std::vector<char *> args;
    for (const char *a : argv)
        args.push_back(const_cast<char *>(a));
    args.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0)
        die(std::string("posix_spawn ") + args[0]);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (policyPipe[0] >= 0)
        close(policyPipe[0]);
    std::string output;
    char buffer[4096];
    for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("read");
        output.append(buffer, size_t(n));
    }
    close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return output;
}

class Connection
{
public:
    explicit Connection(int port)
    {
        m_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(uint16_t(port));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(m_fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0)
            m_fd = -1;
        int one = 1;
        setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        m_port = port;
    }
    ~Connection()
    {
        if (m_fd >= 0)
            close(m_fd);
    }
    bool ok() const { return m_fd >= 0; }

    // POST /mcp; returns the body (the server answers single requests with application/json).
    std::string post(const std::string &body, std::string *sessionHeader = nullptr)
    {
        std::string request = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(m_port)
                + "\r\nContent-Type: application/json\r\nAccept: application/json, "
                  "text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n";
        if (!m_session.empty())
            request += "Mcp-Session-Id: " + m_session + "\r\n";
        request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        for (size_t sent = 0; sent < request.size();) {
            ssize_t n = write(m_fd, request.data() + sent, request.size() - sent);
            if (n <= 0)
                die("write to cmcpd");
            sent += size_t(n);
        }
        size_t headerEnd;
        while ((headerEnd = m_buffer.find("\r\n\r\n")) == std::string::npos)
            fill();
        const std::string head = m_buffer.substr(0, headerEnd);
        size_t length = 0;
        for (const char *name : {"Content-Length: ", "content-length: "})
            if (size_t at = head.find(name); at != std::string::npos)
                length = std::strtoul(head.c_str() + at + std::strlen(name), nullptr, 10);
        if (size_t at = head.find("Mcp-Session-Id: "); at != std::string::npos && sessionHeader)
            *sessionHeader = head.substr(at + 16, head.find("\r\n", at) - at - 16);
        while (m_buffer.size() < headerEnd + 4 + length)
            fill();
        std::string answer = m_buffer.substr(headerEnd + 4, length);
        m_buffer.erase(0, headerEnd + 4 + length);
        return answer;
    }
    void setSession(std::string session) { m_session = std::move(session); }

private:
    void fill()
    {
        char buffer[65536];
        ssize_t n = read(m_fd, buffer, sizeof buffer);
        if (n <= 0)
            die("cmcpd closed the connection");
        m_buffer.append(buffer, size_t(n));
    }
    int m_fd = -1;
    int m_port = 0;
    std::string m_session;
    std::string m_buffer;
};

int freePort()
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (bind(fd, reinterpret_cast<sockaddr *>(&address), size) != 0
        || getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size) != 0)
        die("cannot find a free port");
    close(fd);
    return ntohs(address.sin_port);
}

// The jail's wall_ms in a tools/call answer.
double jailWallMs(const std::string &answer)
{
    const size_t at = answer.rfind("\"wall_ms\":");
    return at == std::string::npos ? -1 : std::strtod(answer.c_str() + at + 10, nullptr);
}

std::string callBody(long id, const char *tool, const char *argument, const char *value)
{
    return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id)
            + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool + "\",\"arguments\":{\""
            + argument + "\":\"" + value + "\"}}}";
}

void report(const char *what, const char *daemon, const std::vector<double> &bare,
            const std::vector<double> &jailed, const std::vector<double> &tool,
            const std::vector<double> &jobWall)
{
    const Stats b = statsOf(bare), j = statsOf(jailed), t = statsOf(tool), w = statsOf(jobWall);
    std::printf(
            "| %s | %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.1f | %.2f | %.2f | %.1fx |\n",
            what, daemon, b.median, b.p99, j.median, j.p99, t.median, t.p99, w.median,
            t.median - b.median, t.median - j.median, t.median / b.median);
}

// The program and the policy (with uid, gid and workspace) of one tool's jobs.
struct JailedRun
{
    std::string program;
    std::string policy;
};

JailedRun jailedRun(const std::string &cmcpd, const char *root, const char *kind)
{
    const std::string command = "cd " + std::string(root) + " && " + cmcpd + " --set SANDBOX_ROOT="
            + root + " --set SANDBOX_UID_BASE=120300 --set LOG_LEVEL=warning --print-job-policies";
    FILE *pipe = popen(command.c_str(), "r");
    if (!pipe)
        die("popen cmcpd --print-job-policies");
    QByteArray text;
    char buffer[65536];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
        text.append(buffer, qsizetype(n));
    if (pclose(pipe) != 0)
        die("cmcpd --print-job-policies failed");
    const QJsonObject job =
            QJsonDocument::fromJson(text).object().value(QLatin1String(kind)).toObject();
    QJsonObject policy = job.value(QLatin1String("policy")).toObject();
    // A uid of its own, the pool's group: the workspace is group-writable for it.
    policy.insert(QLatin1String("uid"), 120316);
    policy.insert(QLatin1String("gid"), 120300);
    policy.insert(QLatin1String("workspace"),
                  QString::fromLocal8Bit(root) + QLatin1String("/workspace"));
    return {job.value(QLatin1String("program")).toString().toStdString(),
            QJsonDocument(policy).toJson(QJsonDocument::Compact).toStdString()};
}

} // namespace

struct Daemon
{
    const char *name;
    pid_t pid = -1;
    int port = 0;
    std::string root;
    std::unique_ptr<Connection> connection;
};

// cmcpd on a free port in a fresh directory of its own, with `settings` on top of the bench's.
Daemon startDaemon(const char *name, const std::string &cmcpd, uid_t uidBase,
                   const std::vector<std::string> &settings)
{
    Daemon daemon;
    daemon.name = name;
    char root[] = "/tmp/cmcp-system-bench.XXXXXX";
    if (!mkdtemp(root) || chmod(root, 0755) != 0)
        die("mkdtemp");
    daemon.root = root;
    daemon.port = freePort();
    std::vector<std::string> args{"cmcpd",
                                  "--host",
                                  "127.0.0.1",
                                  "--port",
                                  std::to_string(daemon.port),
                                  "--set",
                                  "SANDBOX_ROOT=" + daemon.root,
                                  "--set",
                                  "SANDBOX_UID_BASE=" + std::to_string(uidBase),
                                  "--set",
                                  "SANDBOX_UID_COUNT=16",
                                  "--set",
                                  "LOG_LEVEL=warning"};
    for (const std::string &setting : settings) {
        args.push_back("--set");
        args.push_back(setting);
    }
    daemon.pid = fork();
    if (daemon.pid == 0) {
        const int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (chdir(root) != 0)
            _exit(127);
        std::vector<char *> argv;
        for (std::string &a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(cmcpd.c_str(), argv.data());
        _exit(127);
    }
    for (int attempt = 0; attempt < 200 && !(daemon.connection && daemon.connection->ok());
         ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
        daemon.connection = std::make_unique<Connection>(daemon.port);
    }
    if (!daemon.connection->ok())
        die(std::string("cmcpd (") + name + ") did not start listening");
    return daemon;
}

// A session of its own on `connection`.
void initialize(Connection &connection)
{
    std::string session;
    connection.post(
            R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cmcp-system-bench","version":"1"}}})",
            &session);
    connection.setSession(session);
    connection.post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
}

void stopDaemon(Daemon &daemon)
{
    if (daemon.pid <= 0)
        return;
    daemon.connection.reset();
    kill(daemon.pid, SIGTERM);
    waitpid(daemon.pid, nullptr, 0);
    daemon.pid = -1;
    const std::string command = "rm -rf " + daemon.root;
    if (std::system(command.c_str()) != 0)
        std::fprintf(stderr, "cmcp-system-bench: could not remove %s\n", daemon.root.c_str());
}

// utime + stime + cutime + cstime of `pid`, in milliseconds (0 when it is gone).
double processCpuMs(pid_t pid)
{
    FILE *f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
    if (!f)
        return 0;
    char text[4096];
    const size_t n = std::fread(text, 1, sizeof text - 1, f);
    std::fclose(f);
    text[n] = '\0';
    const char *after = std::strrchr(text, ')');
    if (!after)
        return 0;
    // Fields 3.. after the command: state ppid pgrp session tty tpgid flags minflt cminflt
    // majflt cmajflt utime stime cutime cstime.
    unsigned long long v[15] = {};
    char state = 0;
    if (std::sscanf(after + 2,
                    "%c %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
                    &state, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
                    &v[10], &v[11], &v[12], &v[13])
        != 15)
        return 0;
    const double tick = 1000.0 / double(sysconf(_SC_CLK_TCK));
    return double(v[10] + v[11] + v[12] + v[13]) * tick;
}

// The daemon and every process still alive below it (its templates: their monitors, templates
// and, reaped by them, helpers, shepherds and calls).
double treeCpuMs(pid_t root)
{
    double total = 0;
    std::vector<pid_t> todo{root};
    while (!todo.empty()) {
        const pid_t pid = todo.back();
        todo.pop_back();
        total += processCpuMs(pid);
        const std::string children =
                "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
        if (FILE *f = std::fopen(children.c_str(), "r")) {
            for (long child; std::fscanf(f, "%ld", &child) == 1;)
                todo.push_back(pid_t(child));
            std::fclose(f);
        }
    }
    return total;
}

// What one `echo hi` costs in CPU, all processes together, over `calls` calls.
double cpuPerCallMs(Daemon &daemon, long &id, int calls)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // replacements settle
    const double before = treeCpuMs(daemon.pid);
    for (int i = 0; i < calls; ++i)
        daemon.connection->post(callBody(id++, "system_run_command", "command", "echo hi"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the last jails are reaped
    return (treeCpuMs(daemon.pid) - before) / calls;
}

// How many times `once` succeeded per second, run in a loop by `threads` threads at once for
// `seconds`; each thread gets its index and runs `prepare` first.
template<typename Prepare, typename Once>
double perSecond(int threads, int seconds, Prepare prepare, Once once)
{
    std::vector<std::thread> running;
    std::vector<long> counts(size_t(threads), 0);
    const auto end = Clock::now() + std::chrono::seconds(seconds);
    for (int t = 0; t < threads; ++t)
        running.emplace_back([&, t] {
            auto state = prepare(t); // the thread's own
            while (Clock::now() < end)
                if (once(state))
                    ++counts[size_t(t)];
        });
    for (std::thread &t : running)
        t.join();
    long total = 0;
    for (long c : counts)
        total += c;
    return double(total) / seconds;
}

// `echo hi` calls per second with `sessions` sessions at once, each its own connection.
double callsPerSecond(int port, int sessions, int seconds)
{
    return perSecond(
            sessions, seconds,
            [port](int) {
                struct Session
                {
                    std::unique_ptr<Connection> connection;
                    long id = 1;
                };
                Session session{std::make_unique<Connection>(port)};
                initialize(*session.connection);
                return session;
            },
            [](auto &session) {
                return session.connection
                               ->post(callBody(session.id++, "system_run_command", "command",
                                               "echo hi"))
                               .find(R"("stdout":"hi\n")")
                        != std::string::npos;
            });
}

double bareCallsPerSecond(int threads, int seconds)
{
    const std::vector<const char *> bash{"/usr/bin/bash", "-c", "echo hi"};
    return perSecond(
            threads, seconds, [](int) { return 0; },
            [&bash](int &) { return runBare(bash) == "hi\n"; });
}

// A subshell forked from a running bash and waited for, per fork (a shell's floor: no exec).
double subshellForkMs(int forks)
{
    const std::string loop = "for ((i=0;i<" + std::to_string(forks) + ";i++)); do (exit); done";
    const std::vector<const char *> bash{"/usr/bin/bash", "-c", loop.c_str()};
    const auto start = Clock::now();
    runBare(bash);
    return msSince(start) / forks;
}

int main(int argc, char **argv)
{
    std::string cmcpd;
    int n = 300, warmup = 20, gapMs = 80, sessions = 8, seconds = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--cmcpd" && i + 1 < argc)
            cmcpd = argv[++i];
        else if (a == "--n" && i + 1 < argc)
            n = std::max(1, std::atoi(argv[++i]));
        else if (a == "--warmup" && i + 1 < argc)
            warmup = std::max(0, std::atoi(argv[++i]));
        else if (a == "--gap-ms" && i + 1 < argc)
            gapMs = std::max(0, std::atoi(argv[++i]));
        else if (a == "--sessions" && i + 1 < argc)
            sessions = std::max(1, std::atoi(argv[++i]));
        else if (a == "--seconds" && i + 1 < argc)
            seconds = std::max(1, std::atoi(argv[++i]));
        else
            die("usage: cmcp-system-bench [--cmcpd PATH] [--n N] [--warmup W] [--gap-ms G] "
                "[--sessions S] [--seconds T]");
    }
    if (cmcpd.empty()) {
        char self[4096];
        const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0)
            die("cannot find myself");
        self[len] = '\0';
        cmcpd = std::string(self).substr(0, std::string(self).rfind("/tests/bench/"))
                + "/server/cmcpd";
    }
    if (geteuid() != 0)
        die("needs root: the jobs switch to host uids of the pool");

    Daemon built = startDaemon("per-call jails", cmcpd, 120300, {});
    Daemon forked = startDaemon("templates", cmcpd, 120320, {"JOB_CALL_TEMPLATES=true"});
    Daemon *daemons[] = {&built, &forked};
    for (Daemon *daemon : daemons)
        initialize(*daemon->connection);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000)); // templates and warm jobs up

    const std::string jail = cmcpd.substr(0, cmcpd.rfind('/')) + "/jail/cmcp-jail";
    const JailedRun commandJob = jailedRun(cmcpd, built.root.c_str(), "command");
    const JailedRun pythonJob = jailedRun(cmcpd, built.root.c_str(), "python");
    const std::vector<const char *> jailedBash{
            jail.c_str(), "--policy-fd", "3", "--", commandJob.program.c_str(), "-c", "echo hi"};
    const std::vector<const char *> jailedPython{
            jail.c_str(), "--policy-fd", "3",  "--",      pythonJob.program.c_str(),
            "-I",         "-S",          "-c", "print(1)"};
    const std::vector<const char *> bash{"/usr/bin/bash", "-c", "echo hi"};
    const std::vector<const char *> python{"/usr/bin/python3", "-I", "-S", "-c", "print(1)"};
    std::vector<double> bareBash, jailedBashMs, barePython, jailedPythonMs;
    std::vector<double> toolBash[2], jailBash[2], toolPython[2], jailPython[2];
    long id = 1;
    const auto stopAll = [&] {
        for (Daemon *daemon : daemons)
            stopDaemon(*daemon);
    };
    for (int i = 0; i < warmup + n; ++i) {
        const bool keep = i >= warmup;
        auto start = Clock::now();
        if (runBare(bash) != "hi\n")
            die("bash -c 'echo hi' did not print hi");
        const double bareB = msSince(start);
        start = Clock::now();
        if (runBare(jailedBash, commandJob.policy) != "hi\n") {
            stopAll();
            die("bash -c 'echo hi' under cmcp-jail did not print hi");
        }
        const double jailedB = msSince(start);
        double toolB[2], toolP[2];
        std::string commandAnswer[2], pythonAnswer[2];
        for (int d = 0; d < 2; ++d) {
            start = Clock::now();
            commandAnswer[d] = daemons[d]->connection->post(
                    callBody(id++, "system_run_command", "command", "echo hi"));
            toolB[d] = msSince(start);
            std::this_thread::sleep_for(std::chrono::milliseconds(gapMs));
            if (commandAnswer[d].find(R"("stdout":"hi\n")") == std::string::npos) {
                stopAll();
                die("system_run_command did not print hi: " + commandAnswer[d]);
            }
        }
        start = Clock::now();
        if (runBare(python) != "1\n")
            die("python3 did not print 1");
        const double bareP = msSince(start);
        start = Clock::now();
        if (runBare(jailedPython, pythonJob.policy) != "1\n") {
            stopAll();
            die("python3 under cmcp-jail did not print 1");
        }
        const double jailedP = msSince(start);
        for (int d = 0; d < 2; ++d) {
            start = Clock::now();
            pythonAnswer[d] = daemons[d]->connection->post(
                    callBody(id++, "system_run_python", "code", "print(1)"));
            toolP[d] = msSince(start);
            std::this_thread::sleep_for(std::chrono::milliseconds(gapMs));
            if (pythonAnswer[d].find(R"("output":"1\n")") == std::string::npos) {
                stopAll();
                die("system_run_python did not print 1: " + pythonAnswer[d]);
            }
        }
        if (!keep)
            continue;
        bareBash.push_back(bareB);
        jailedBashMs.push_back(jailedB);
        barePython.push_back(bareP);
        jailedPythonMs.push_back(jailedP);
        for (int d = 0; d < 2; ++d) {
            toolBash[d].push_back(toolB[d]);
            jailBash[d].push_back(jailWallMs(commandAnswer[d]));
            toolPython[d].push_back(toolP[d]);
            jailPython[d].push_back(jailWallMs(pythonAnswer[d]));
        }
    }
    double cpuMs[2];
    for (int d = 0; d < 2; ++d)
        cpuMs[d] = cpuPerCallMs(*daemons[d], id, n);
    double throughput[2];
    for (int d = 0; d < 2; ++d)
        throughput[d] = callsPerSecond(daemons[d]->port, sessions, seconds);
    const double bareThroughput = bareCallsPerSecond(sessions, seconds);
    const double forkMs =
            statsOf({subshellForkMs(1000), subshellForkMs(1000), subshellForkMs(1000)}).median;
    stopAll();

    std::printf("%d interleaved rounds after %d warm-up rounds, %d ms after each tool call; "
                "milliseconds\n\n",
                n, warmup, gapMs);
    std::printf("| call | daemon | bare median / p99 | cmcp-jail alone median / p99 | tool over "
                "/mcp median / p99 | job wall_ms median | tool − bare | tool − jail alone | tool "
                "/ bare |\n"
                "|---|---|---|---|---|---|---|---|---|\n");
    for (int d = 0; d < 2; ++d)
        report("`system_run_command` `echo hi` vs `bash -c 'echo hi'`", daemons[d]->name, bareBash,
               jailedBashMs, toolBash[d], jailBash[d]);
    for (int d = 0; d < 2; ++d)
        report("`system_run_python` `print(1)` vs `python3 -I -S -c 'print(1)'`", daemons[d]->name,
               barePython, jailedPythonMs, toolPython[d], jailPython[d]);
    std::printf("\ntemplates / per-call jails, medians of the same rounds: echo hi %.2fx, "
                "print(1) %.2fx\n",
                statsOf(toolBash[1]).median / statsOf(toolBash[0]).median,
                statsOf(toolPython[1]).median / statsOf(toolPython[0]).median);
    std::printf(
            "\nCPU per `echo hi` call, every process: per-call jails %.2f ms, templates %.2f ms "
            "(%d calls each)\n",
            cpuMs[0], cpuMs[1], n);
    std::printf("%d sessions at once for %d s: per-call jails %.1f calls/s, templates %.1f "
                "calls/s (%.2fx), bare `bash -c 'echo hi'` from %d threads %.1f/s\n",
                sessions, seconds, throughput[0], throughput[1], throughput[1] / throughput[0],
                sessions, bareThroughput);
    std::printf("floors: a subshell forked from a running bash %.3f ms; `bash -c 'echo hi'` "
                "spawned %.2f ms (the bare median above)\n",
                forkMs, statsOf(bareBash).median);
    return 0;
}
