#include "Floors.h"

#include "LeanHttp.h"
#include "McpMessages.h"

#include <cstdlib>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cmcp::bench {

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
        || listen(listener, 4) != 0
        || getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
        run.error = "floor: cannot listen";
        if (listener >= 0)
            close(listener);
        return run;
    }
    const int port = ntohs(address.sin_port);
    const std::string body = R"({"id":1,"jsonrpc":"2.0","result":{"content":[{"text":)"
                             R"("This is a simple text response for testing.","type":"text"}]}})";
    const std::string answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: "
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
                const size_t length = std::strtoul(
                        headerValue(in.substr(0, headEnd + 2), "content-length").c_str(), nullptr,
                        10);
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
            const std::string request =
                    httpPost(port, "/mcp", callBody(1), "0123456789abcdef0123456789abcdef");
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
        while ((newline = buffer.find('\n')) == std::string::npos
               && (ok = readSome(out[0], buffer, each.capped(5)) > 0)) { }
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

} // namespace cmcp::bench
