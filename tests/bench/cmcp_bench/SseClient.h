// The SSE side of the lean client: a GET whose chunked body is read as events, and a legacy SSE
// session (its stream, plus a keep-alive connection for its POSTs).
#pragma once

#include "Harness.h"
#include "LeanHttp.h"

#include <string>
#include <unistd.h>
#include <utility>

namespace cmcp::bench {

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
        : fd(std::exchange(other.fd, -1)),
          raw(std::move(other.raw)),
          text(std::move(other.text)),
          headDone(other.headDone),
          ended(other.ended),
          status(other.status)
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

    // Reads the response head; true if it is 200.
    bool readHead(const Deadline &deadline);

    // The next event other than comments (keep-alives).
    bool next(std::string &event, std::string &data, const Deadline &deadline);
};

// A legacy SSE session: its stream, and a keep-alive connection for the POSTs.
struct SseSession
{
    SseReader stream;
    std::string endpoint;

    // GET /sse and its endpoint event.
    bool open(int port, const Deadline &deadline, std::string *error);

    // POSTs `body` and, when `id` >= 0, reads the reply with that id off the stream.
    bool send(HttpConn &post, int port, const std::string &body, long id, std::string *reply,
              const Deadline &deadline, std::string *error);

    // initialize, then notifications/initialized.
    bool handshake(HttpConn &post, int port, const Deadline &deadline, std::string *error);
};

} // namespace cmcp::bench
