// The lean HTTP/1.1 client of cmcp-bench: raw keep-alive sockets to 127.0.0.1, no SDK, so that
// the figures are the daemon's and not a client library's.
#pragma once

#include "Harness.h"

#include <cstddef>
#include <string>
#include <sys/types.h>
#include <unistd.h>
#include <utility>

namespace cmcp::bench {

int connectLocal(int port);
bool writeAll(int fd, const std::string &data, const Deadline &deadline);
// Appends what is readable within the deadline. >0 bytes read, 0 end of stream, -1 error or
// timeout.
ssize_t readSome(int fd, std::string &buffer, const Deadline &deadline);
std::string lower(std::string text);
// The value of header `name` (any case) in a response's head, "" if absent.
std::string headerValue(const std::string &head, const std::string &name);

struct HttpResponse
{
    int status = 0;
    std::string head;
    std::string body;
};

// Decodes complete chunks of a chunked body from `raw` starting at `at`. Returns the offset after
// the last complete chunk; sets `ended` at the final zero-length chunk.
size_t decodeChunks(const std::string &raw, size_t at, std::string &out, bool &ended);
// Returns the bytes a complete response takes at the start of `buffer`, 0 when incomplete.
size_t parseResponse(const std::string &buffer, HttpResponse &response);

// A keep-alive connection to 127.0.0.1 and what it has read but not yet parsed.
struct HttpConn
{
    int fd = -1;
    std::string buffer;

    HttpConn() = default;
    HttpConn(const HttpConn &) = delete;
    HttpConn &operator=(const HttpConn &) = delete;
    HttpConn(HttpConn &&other) noexcept
        : fd(std::exchange(other.fd, -1)),
          buffer(std::move(other.buffer))
    {
    }
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

// The MCP protocol version the requests announce.
inline constexpr const char *protocolVersion = "2025-11-25";

std::string hostHeader(int port);
// Requests to 127.0.0.1:port; with a session id they carry Mcp-Session-Id and
// MCP-Protocol-Version.
std::string httpPost(int port, const std::string &path, const std::string &body,
                     const std::string &sessionId);
std::string httpGet(int port, const std::string &path, const std::string &accept,
                    const std::string &sessionId = {});
std::string httpDelete(int port, const std::string &sessionId);

} // namespace cmcp::bench
