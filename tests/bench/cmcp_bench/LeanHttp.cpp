#include "LeanHttp.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

namespace cmcp::bench {

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

std::string hostHeader(int port)
{
    return "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
}

std::string httpPost(int port, const std::string &path, const std::string &body,
                     const std::string &sessionId)
{
    std::string request = "POST " + path + " HTTP/1.1\r\n" + hostHeader(port)
            + "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    if (!sessionId.empty())
        request += "Mcp-Session-Id: " + sessionId + "\r\nMCP-Protocol-Version: " + protocolVersion
                + "\r\n";
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    return request;
}

std::string httpGet(int port, const std::string &path, const std::string &accept,
                    const std::string &sessionId)
{
    std::string request =
            "GET " + path + " HTTP/1.1\r\n" + hostHeader(port) + "Accept: " + accept + "\r\n";
    if (!sessionId.empty())
        request += "Mcp-Session-Id: " + sessionId + "\r\nMCP-Protocol-Version: " + protocolVersion
                + "\r\n";
    return request + "\r\n";
}

std::string httpDelete(int port, const std::string &sessionId)
{
    return "DELETE /mcp HTTP/1.1\r\n" + hostHeader(port) + "Mcp-Session-Id: " + sessionId
            + "\r\nMCP-Protocol-Version: " + protocolVersion + "\r\nContent-Length: 0\r\n\r\n";
}

} // namespace cmcp::bench
