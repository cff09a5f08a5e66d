// system_run_command and system_run_python end to end over /mcp against the bare programs, in one
// run and interleaved (bare, tool, bare, tool, ...), so both sides see the same machine noise:
//   system_run_command {"command":"echo hi"}  vs  bash -c 'echo hi'
//   system_run_python  {"code":"print(1)"}    vs  python3 -I -S -c 'print(1)'
// The client is a single keep-alive HTTP/1.1 connection written here (no SDK: see BENCHMARKS.md
// for what the SDK adds), the bare programs are started with posix_spawn and their output read
// to the end. A third column runs the same program under cmcp-jail alone, with the policy the
// daemon uses (cmcpd --print-job-policies), started the same way: the difference between it and
// the tool is the daemon's share (HTTP, JSON, the supervisor, the Python runner), the
// difference between it and the bare program the jail's.
//
//   cmcp-system-bench [--cmcpd PATH] [--n N] [--warmup W] [--gap-ms G]
//
// After each tool call the bench pauses G ms (default 80) before it measures anything else: the
// daemon starts the replacement of a pre-started job (BASH_WARM_JOBS, PYTHON_WARM_JOBS) right
// after a call, and on two cores that start would otherwise slow the next measurement, bare or
// not. Real clients pause between calls too; the pause is never inside a measurement.
//
// Needs root (the jobs switch to host uids 120300..120316).
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

void report(const char *what, const std::vector<double> &bare, const std::vector<double> &jailed,
            const std::vector<double> &tool, const std::vector<double> &jobWall)
{
    const Stats b = statsOf(bare), j = statsOf(jailed), t = statsOf(tool), w = statsOf(jobWall);
    std::printf("| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.1f | %.2f | %.2f | %.1fx |\n",
                what, b.median, b.p99, j.median, j.p99, t.median, t.p99, w.median,
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

int main(int argc, char **argv)
{
    std::string cmcpd;
    int n = 300, warmup = 20, gapMs = 80;
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
        else
            die("usage: cmcp-system-bench [--cmcpd PATH] [--n N] [--warmup W] [--gap-ms G]");
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

    char root[] = "/tmp/cmcp-system-bench.XXXXXX";
    if (!mkdtemp(root) || chmod(root, 0755) != 0)
        die("mkdtemp");
    const int port = freePort();
    const pid_t daemon = fork();
    if (daemon == 0) {
        const int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (chdir(root) != 0)
            _exit(127);
        const std::string sandbox = std::string("SANDBOX_ROOT=") + root;
        execl(cmcpd.c_str(), "cmcpd", "--host", "127.0.0.1", "--port", std::to_string(port).c_str(),
              "--set", sandbox.c_str(), "--set", "SANDBOX_UID_BASE=120300", "--set",
              "SANDBOX_UID_COUNT=16", "--set", "LOG_LEVEL=warning", nullptr);
        _exit(127);
    }
    const auto stopDaemon = [&] {
        kill(daemon, SIGTERM);
        waitpid(daemon, nullptr, 0);
        const std::string command = std::string("rm -rf ") + root;
        if (std::system(command.c_str()) != 0)
            std::fprintf(stderr, "cmcp-system-bench: could not remove %s\n", root);
    };
    std::unique_ptr<Connection> connection;
    for (int attempt = 0; attempt < 200 && !(connection && connection->ok()); ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
        connection = std::make_unique<Connection>(port);
    }
    if (!connection->ok()) {
        stopDaemon();
        die("cmcpd did not start listening on port " + std::to_string(port));
    }
    std::string session;
    connection->post(
            R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cmcp-system-bench","version":"1"}}})",
            &session);
    connection->setSession(session);
    connection->post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

    const std::string jail = cmcpd.substr(0, cmcpd.rfind('/')) + "/jail/cmcp-jail";
    const JailedRun commandJob = jailedRun(cmcpd, root, "command");
    const JailedRun pythonJob = jailedRun(cmcpd, root, "python");
    const std::vector<const char *> jailedBash{
            jail.c_str(), "--policy-fd", "3", "--", commandJob.program.c_str(), "-c", "echo hi"};
    const std::vector<const char *> jailedPython{
            jail.c_str(), "--policy-fd", "3",  "--",      pythonJob.program.c_str(),
            "-I",         "-S",          "-c", "print(1)"};
    const std::vector<const char *> bash{"/usr/bin/bash", "-c", "echo hi"};
    const std::vector<const char *> python{"/usr/bin/python3", "-I", "-S", "-c", "print(1)"};
    std::vector<double> bareBash, jailedBashMs, toolBash, jailBash, barePython, jailedPythonMs,
            toolPython, jailPython;
    long id = 1;
    for (int i = 0; i < warmup + n; ++i) {
        const bool keep = i >= warmup;
        auto start = Clock::now();
        if (runBare(bash) != "hi\n")
            die("bash -c 'echo hi' did not print hi");
        const double bareB = msSince(start);
        start = Clock::now();
        if (runBare(jailedBash, commandJob.policy) != "hi\n") {
            stopDaemon();
            die("bash -c 'echo hi' under cmcp-jail did not print hi");
        }
        const double jailedB = msSince(start);
        start = Clock::now();
        const std::string commandAnswer =
                connection->post(callBody(id++, "system_run_command", "command", "echo hi"));
        const double toolB = msSince(start);
        std::this_thread::sleep_for(std::chrono::milliseconds(gapMs));
        if (commandAnswer.find(R"("stdout":"hi\n")") == std::string::npos) {
            stopDaemon();
            die("system_run_command did not print hi: " + commandAnswer);
        }
        start = Clock::now();
        if (runBare(python) != "1\n")
            die("python3 did not print 1");
        const double bareP = msSince(start);
        start = Clock::now();
        if (runBare(jailedPython, pythonJob.policy) != "1\n") {
            stopDaemon();
            die("python3 under cmcp-jail did not print 1");
        }
        const double jailedP = msSince(start);
        start = Clock::now();
        const std::string pythonAnswer =
                connection->post(callBody(id++, "system_run_python", "code", "print(1)"));
        const double toolP = msSince(start);
        std::this_thread::sleep_for(std::chrono::milliseconds(gapMs));
        if (pythonAnswer.find(R"("output":"1\n")") == std::string::npos) {
            stopDaemon();
            die("system_run_python did not print 1: " + pythonAnswer);
        }
        if (!keep)
            continue;
        bareBash.push_back(bareB);
        jailedBashMs.push_back(jailedB);
        toolBash.push_back(toolB);
        jailBash.push_back(jailWallMs(commandAnswer));
        barePython.push_back(bareP);
        jailedPythonMs.push_back(jailedP);
        toolPython.push_back(toolP);
        jailPython.push_back(jailWallMs(pythonAnswer));
    }
    stopDaemon();

    std::printf("%d interleaved rounds after %d warm-up rounds, %d ms after each tool call; "
                "milliseconds\n\n",
                n, warmup, gapMs);
    std::printf("| call | bare median / p99 | cmcp-jail alone median / p99 | tool over /mcp median "
                "/ p99 | job wall_ms median | tool − bare | tool − jail alone | tool / bare |\n"
                "|---|---|---|---|---|---|---|---|\n");
    report("`system_run_command` `echo hi` vs `bash -c 'echo hi'`", bareBash, jailedBashMs,
           toolBash, jailBash);
    report("`system_run_python` `print(1)` vs `python3 -I -S -c 'print(1)'`", barePython,
           jailedPythonMs, toolPython, jailPython);
    return 0;
}
