// cmcp-html: extracts text from untrusted HTML for web_scrape, out of the daemon's process.
//
// gumbo, the HTML5 parser, is the one library here that reads bytes from the web, and Debian
// builds it with assertions on: a few seconds of random tag soup hit
// "parser.c: node_qualified_tag_is: Assertion `node' failed", an abort(). In the daemon that
// would end every session; here it ends one extraction, and the daemon starts a fresh helper.
// Before reading any page the helper confines itself with seccomp to reading its requests,
// writing its answers and managing memory: a parser bug that goes further than a crash finds
// no system call to use.
//
// Protocol, on stdin and stdout: a request is one JSON line {"selector", "format" ("text" or
// "markdown"), "base", "max_bytes", "time_ms", "memory_bytes", "length"} followed by `length`
// bytes of UTF-8 HTML; the answer is one JSON line {"ok", "error", "title", "text", "matches",
// "truncated"}. The helper exits at the end of its input.

#include "html/HtmlText.h"
#include "posix/WriteAll.h"

#include <nlohmann/json.hpp>
#include <seccomp.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace {

constexpr size_t maxHeaderBytes = 1 << 20;

class Input
{
public:
    // false at the end of the input.
    bool readLine(std::string *line)
    {
        for (;;) {
            const size_t newline = m_buffer.find('\n');
            if (newline != std::string::npos) {
                line->assign(m_buffer, 0, newline);
                m_buffer.erase(0, newline + 1);
                return true;
            }
            if (m_buffer.size() > maxHeaderBytes || !fill())
                return false;
        }
    }
    bool readExactly(size_t length, std::string *bytes)
    {
        while (m_buffer.size() < length) {
            if (!fill())
                return false;
        }
        bytes->assign(m_buffer, 0, length);
        m_buffer.erase(0, length);
        return true;
    }

private:
    bool fill()
    {
        char chunk[65536];
        for (;;) {
            const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
            if (n > 0) {
                m_buffer.append(chunk, size_t(n));
                return true;
            }
            if (n < 0 && errno == EINTR)
                continue;
            return false;
        }
    }
    std::string m_buffer;
};

#ifdef CMCP_ADDRESS_SANITIZER
// LeakSanitizer's check at exit stops the process with ptrace from a clone, which the filter
// rightly refuses; the sanitizer build keeps every other check.
extern "C" int __lsan_is_turned_off()
{
    return 1;
}
#endif

// Reading fd 0, writing fds 1 and 2, memory, the clock, and leaving: nothing else.
bool confine()
{
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!filter)
        return false;
    bool ok = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(read), 1,
                               SCMP_A0(SCMP_CMP_EQ, STDIN_FILENO))
                    == 0
            && seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                                SCMP_A0(SCMP_CMP_EQ, STDOUT_FILENO))
                    == 0
            && seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                                SCMP_A0(SCMP_CMP_EQ, STDERR_FILENO))
                    == 0;
    for (const int call : {SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap),
                           SCMP_SYS(madvise), SCMP_SYS(clock_gettime), SCMP_SYS(rt_sigreturn),
                           SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(futex)})
        ok = ok && seccomp_rule_add(filter, SCMP_ACT_ALLOW, call, 0) == 0;
    // An assertion's abort() raises SIGABRT through these; it ends the helper either way, but
    // with the signal the daemon can say what happened.
    for (const int call : {SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigaction), SCMP_SYS(getpid),
                           SCMP_SYS(gettid), SCMP_SYS(tgkill)})
        ok = ok && seccomp_rule_add(filter, SCMP_ACT_ALLOW, call, 0) == 0;
#ifdef CMCP_ADDRESS_SANITIZER
    // The sanitizer runtimes probe whether memory is readable by writing it to a pipe, and
    // report through their own calls: sanitizer builds allow those too (never a release build).
    for (const int call :
         {SCMP_SYS(pipe2), SCMP_SYS(close), SCMP_SYS(write), SCMP_SYS(mprotect),
          SCMP_SYS(sched_yield), SCMP_SYS(prctl), SCMP_SYS(sigaltstack), SCMP_SYS(open),
          SCMP_SYS(openat), SCMP_SYS(readlink), SCMP_SYS(newfstatat), SCMP_SYS(pread64)})
        ok = ok && seccomp_rule_add(filter, SCMP_ACT_ALLOW, call, 0) == 0;
#endif
    ok = ok && seccomp_load(filter) == 0;
    seccomp_release(filter);
    return ok;
}

nlohmann::json answer(const std::string &header, Input &input, bool *keepGoing)
{
    const nlohmann::json request = nlohmann::json::parse(header, nullptr, false);
    if (request.is_discarded() || !request.is_object()) {
        *keepGoing = false;
        return {{"ok", false}, {"error", "cmcp-html: unreadable request"}};
    }
    const size_t length = request.value("length", size_t(0));
    std::string html;
    if (!input.readExactly(length, &html)) {
        *keepGoing = false;
        return {{"ok", false}, {"error", "cmcp-html: the page ended early"}};
    }
    cmcp::html::ParseLimits limits;
    limits.time = std::chrono::milliseconds(request.value("time_ms", 5000L));
    limits.memoryBytes = request.value("memory_bytes", limits.memoryBytes);
    const cmcp::html::TextFormat format = request.value("format", std::string()) == "markdown"
            ? cmcp::html::TextFormat::Markdown
            : cmcp::html::TextFormat::Text;
    const cmcp::html::PageText page = cmcp::html::extractPage(
            html, request.value("selector", std::string()), format,
            request.value("base", std::string()), request.value("max_bytes", size_t(0)), limits);
    if (!page.ok)
        return {{"ok", false}, {"error", page.error}};
    return {{"ok", true},
            {"title", page.title},
            {"text", page.text},
            {"matches", page.matches},
            {"truncated", page.truncated}};
}

} // namespace

int main(int argc, char **argv)
{
    const bool unconfined = argc > 1 && std::string(argv[1]) == "--no-seccomp";
    if (!unconfined && !confine()) {
        std::fputs("cmcp-html: cannot load the seccomp filter\n", stderr);
        return 70;
    }
    Input input;
    std::string header;
    bool keepGoing = true;
    while (keepGoing && input.readLine(&header)) {
        const nlohmann::json reply = answer(header, input, &keepGoing);
        const std::string line =
                reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        if (cmcp::writeAll(STDOUT_FILENO, line.data(), line.size()) != line.size())
            return 1;
    }
    return 0;
}
