// Stands in for cmcp-browser under cmcp-jail in tst_browserjail: it answers the worker's
// protocol (a "ready" line, then one answer per request) and, for each request, tries from
// inside the worker's world what a compromised browser would try. The answer's content is one
// "check: result" line per attempt, the result "ok" or the errno's name. Plain C, no Qt: the
// minimal root has the host's /usr, which is all it links.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

std::string result(bool ok, int err)
{
    if (ok)
        return "ok";
    const char *name = strerrorname_np(err);
    return name ? name : std::to_string(err);
}

// Creates and writes `path`: what the worker's profile, caches and shared memory do.
std::string tryWrite(const char *path, int flags)
{
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC | flags, 0600);
    if (fd < 0)
        return result(false, errno);
    const bool written = ::write(fd, "probe\n", 6) == 6;
    const int err = errno;
    ::close(fd);
    if (flags & O_CREAT)
        ::unlink(path);
    return result(written, err);
}

std::string tryRead(const char *path)
{
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    const int err = errno;
    if (fd >= 0)
        ::close(fd);
    return result(fd >= 0, err);
}

// In a child: `attempt` returns 0 or an errno, which the child exits with.
template<typename Attempt>
std::string inChild(Attempt attempt)
{
    const pid_t child = ::fork();
    if (child == 0)
        ::_exit(attempt());
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return "no verdict";
    return result(WEXITSTATUS(status) == 0, WEXITSTATUS(status));
}

std::string statusLine(const char *key)
{
    FILE *status = std::fopen("/proc/self/status", "re");
    if (!status)
        return result(false, errno);
    char line[256];
    std::string value = "absent";
    const std::size_t length = std::strlen(key);
    while (std::fgets(line, sizeof line, status)) {
        if (std::strncmp(line, key, length) == 0 && line[length] == ':') {
            value = line + length + 1;
            value.erase(0, value.find_first_not_of(" \t"));
            value.erase(value.find_last_not_of("\n") + 1);
        }
    }
    std::fclose(status);
    return value;
}

std::string checks()
{
    const char *home = std::getenv("HOME") ? std::getenv("HOME") : "/nonexistent";
    const std::string homeFile = std::string(home) + "/probe-file";
    std::string out;
    auto add = [&](const std::string &check, const std::string &value) {
        out += check + ": " + value + "\\n";
    };
    add("write home", tryWrite(homeFile.c_str(), O_CREAT | O_EXCL));
    add("write /tmp", tryWrite("/tmp/probe-file", O_CREAT | O_EXCL));
    add("write /dev/shm", tryWrite("/dev/shm/probe-file", O_CREAT | O_EXCL));
    // Writable as far as the mount and the file's mode go: a device node (0666) on the read-only
    // /dev, the process's own /proc entry on the read-write procfs.
    add("write /dev/null", tryWrite("/dev/null", 0));
    add("write /proc/self/comm", tryWrite("/proc/self/comm", 0));
    add("read /usr/share/fonts", tryRead("/usr/share/fonts"));
    add("read /etc/passwd", tryRead("/etc/passwd"));
    // /usr is not noexec in the browser's root: only an execute rule can refuse this.
    add("exec /usr/bin/true", inChild([] {
            char *const argv[] = {const_cast<char *>("true"), nullptr};
            char *const envp[] = {nullptr};
            ::execve("/usr/bin/true", argv, envp);
            return errno;
        }));
    // Allowed to any process without seccomp (the parent becomes its tracer).
    add("ptrace traceme",
        inChild([] { return ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 0 : errno; }));
    add("Seccomp", statusLine("Seccomp"));
    add("NoNewPrivs", statusLine("NoNewPrivs"));
    return out;
}

} // namespace

int main()
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::printf("{\"ready\":true,\"sandbox\":false,\"sandbox_off\":\"a probe\"}\n");
    char line[65536];
    while (std::fgets(line, sizeof line, stdin)) {
        const char *id = std::strstr(line, "\"id\":");
        if (!id)
            continue;
        const long long number = std::atoll(id + 5);
        std::printf("{\"id\":%lld,\"ok\":true,\"format\":\"text\",\"content\":\"%s\"}\n", number,
                    checks().c_str());
    }
    return 0;
}
