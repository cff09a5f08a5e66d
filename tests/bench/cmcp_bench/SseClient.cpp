#include "SseClient.h"

#include "McpMessages.h"

#include <cstdio>
#include <sstream>

namespace cmcp::bench {

bool SseReader::readHead(const Deadline &deadline)
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

bool SseReader::next(std::string &event, std::string &data, const Deadline &deadline)
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

bool SseSession::open(int port, const Deadline &deadline, std::string *error)
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

bool SseSession::send(HttpConn &post, int port, const std::string &body, long id,
                      std::string *reply, const Deadline &deadline, std::string *error)
{
    HttpResponse response;
    if (!post.roundTrip(httpPost(port, endpoint, body, {}), response, deadline)
        || response.status != 202) {
        *error = "POST " + endpoint + " was not accepted (HTTP " + std::to_string(response.status)
                + ")";
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

bool SseSession::handshake(HttpConn &post, int port, const Deadline &deadline, std::string *error)
{
    return send(post, port, initializeBody, 0, nullptr, deadline, error)
            && send(post, port, initializedBody, -1, nullptr, deadline, error);
}

} // namespace cmcp::bench
