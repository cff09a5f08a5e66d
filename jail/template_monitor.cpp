// The template's monitor (see template.h). Host root, outside every namespace: the only process
// of a template that may create cgroups and move tasks into them, and the one that hands the
// daemon its cells.
#include "jail/cgroup_counters.h"
#include "jail/exit_codes.h"
#include "jail/monitor.h"
#include "jail/protocol/CellProtocol.h"
#include "jail/report.h"
#include "jail/sender_credentials.h"
#include "jail/template.h"
#include "posix/DescriptorPassing.h"
#include "posix/WriteAll.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

namespace cmcp::jail {

namespace {

using Clock = std::chrono::steady_clock;
namespace cells = cell_protocol;
namespace protocol = template_protocol;

// A cell that is not ready within this is given up (its cgroup killed).
constexpr auto kCellStartLimit = std::chrono::seconds(10);

std::uint64_t millisecondsSince(Clock::time_point start)
{
    return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

// The template's user namespace: uid 1000 is the template's own pool uid (so the interpreter
// of every cell starts as uid 1000, what each call is inside), every other uid of the pool is
// itself (a cell switches a call to its leased one), gid 1000 is the pool's gid. No uid the
// pool lacks, no root.
bool writeTemplateIdMaps(pid_t pid, const Policy &policy, const TemplateOptions &pool,
                         std::string &error)
{
    const auto line = [](std::uint64_t inside, std::uint64_t outside, std::uint64_t count) {
        return std::to_string(inside) + " " + std::to_string(outside) + " " + std::to_string(count)
                + "\n";
    };
    std::string uidMap = line(kInsideId, policy.uid, 1);
    if (policy.uid > pool.uidFirst)
        uidMap += line(pool.uidFirst, pool.uidFirst, policy.uid - pool.uidFirst);
    const std::uint64_t end = std::uint64_t(pool.uidFirst) + pool.uidCount;
    if (policy.uid + 1 < end)
        uidMap += line(policy.uid + 1, policy.uid + 1, end - policy.uid - 1);
    const std::string proc = "/proc/" + std::to_string(pid);
    const auto write = [&](const std::string &file, const std::string &text) {
        const int fd = ::open((proc + "/" + file).c_str(), O_WRONLY | O_CLOEXEC);
        const bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == ssize_t(text.size());
        if (!ok)
            error = errnoText("writing " + proc + "/" + file, errno);
        if (fd >= 0)
            ::close(fd);
        return ok;
    };
    return write("uid_map", uidMap) && write("gid_map", line(kInsideId, policy.gid, 1));
}

int listenOn(const std::string &path, std::string &error)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) {
        error = "socket path " + path + ": longer than "
                + std::to_string(sizeof address.sun_path - 1) + " bytes";
        return -1;
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = errnoText("socket", errno);
        return -1;
    }
    ::unlink(path.c_str()); // a template of an earlier daemon that died
    const mode_t old = ::umask(077);
    const int bound = ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
    const int err = errno;
    ::umask(old);
    if (bound != 0 || ::listen(fd, 4) != 0) {
        error = errnoText("listening on " + path, bound != 0 ? err : errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

// The zygote library, beside this program: held by a descriptor the cells' programs load it
// through, so nothing of the host's tree has to be visible in the jail for it.
int openZygoteLibrary(std::string &error)
{
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        error = errnoText("readlink /proc/self/exe", errno);
        return -1;
    }
    std::string path(self, std::size_t(n));
    path = path.substr(0, path.rfind('/') + 1) + kZygoteLibraryName;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        error = errnoText("the zygote library " + path, errno);
    return fd;
}

// What a cell's zygote library is told (template.h, kCellSetupFd), as a memfd.
int cellSetup(const std::string &policyText, const SeccompProgram &seccomp,
              const TemplateOptions &pool, uid_t templateUid,
              const std::vector<CounterFile> &counters, std::string &error)
{
    nlohmann::json filter = nlohmann::json::array();
    for (const sock_filter &insn : seccomp.code)
        filter.push_back({insn.code, insn.jt, insn.jf, insn.k});
    nlohmann::json names = nlohmann::json::array();
    for (const CounterFile &counter : counters)
        names.push_back(counter.name);
    const std::string text = nlohmann::json{
            {"policy", nlohmann::json::parse(policyText)},
            {"seccomp", filter},
            {"seccomp_notifies", seccomp.notifies},
            {"pool_first", pool.uidFirst},
            {"pool_count", pool.uidCount},
            {"template_uid", templateUid},
            {"counters", names}}.dump();
    const int fd = ::memfd_create("cmcp-cell-setup", MFD_CLOEXEC);
    if (fd < 0 || writeAll(fd, text.data(), text.size()) != text.size()) {
        error = errnoText("the cell's setup memfd", errno);
        if (fd >= 0)
            ::close(fd);
        return -1;
    }
    return fd;
}

struct Cell
{
    enum class State { Placing, Starting, Ready, Failed };
    State state = State::Placing;
    JobCgroup cgroup;
    int socket = -1; // the monitor's end until the daemon has it
    Clock::time_point deadline;
};

// The monitor's state once the template runs.
class Monitor
{
public:
    Monitor(const Policy &policy, const std::string &policyText, const SeccompProgram &seccomp,
            const TemplateOptions &options, pid_t templatePid, int templateControl)
        : m_policy(policy),
          m_policyText(policyText),
          m_seccomp(seccomp),
          m_options(options),
          m_template(templatePid),
          m_templateControl(templateControl)
    {
    }

    // Serves until the template ends or the monitor is told to stop; returns the template's
    // wait status and whether it was killed on request.
    void serve(int signalFd, int listenFd);
    void stop(int signalFd, const JobCgroup &templateCgroup);
    int templateStatus() const { return m_templateStatus; }
    bool stopping() const { return m_stopping; }

private:
    void acceptDaemon(int listenFd);
    void onDaemon();
    void onTemplate();
    void onCell(std::uint32_t id, Cell &cell);
    void makeCell();
    void failCell(std::uint32_t id, Cell &cell, const std::string &why);
    void tellDaemon(char kind, std::uint32_t cell, const std::string &text, int fd = -1);
    void reap(int signalFd);

    const Policy &m_policy;
    const std::string &m_policyText;
    const SeccompProgram &m_seccomp;
    const TemplateOptions &m_options;
    const pid_t m_template;
    const int m_templateControl;
    int m_daemon = -1;
    std::map<std::uint32_t, Cell> m_cells;
    std::uint32_t m_lastCell = 0;
    bool m_templateEnded = false;
    int m_templateStatus = 0;
    bool m_stopping = false; // SIGTERM, standard input or the daemon's connection closed
};

void Monitor::tellDaemon(char kind, std::uint32_t cell, const std::string &text, int fd)
{
    if (m_daemon < 0)
        return;
    std::string message(sizeof(cells::ControlReply), '\0');
    cells::ControlReply reply;
    reply.kind = kind;
    reply.cell = cell;
    std::memcpy(message.data(), &reply, sizeof reply);
    message += text.substr(0, 4000);
    std::vector<int> fds;
    if (fd >= 0)
        fds.push_back(fd);
    (void)sendWithFds(m_daemon, message.data(), message.size(), fds);
}

void Monitor::acceptDaemon(int listenFd)
{
    const int client = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0)
        return;
    ucred peer{};
    socklen_t size = sizeof peer;
    // Only the daemon (root) may ask for cells, and only one connection is served.
    if (m_daemon >= 0 || ::getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0
        || peer.uid != ::geteuid()) {
        ::close(client);
        return;
    }
    m_daemon = client;
}

void Monitor::makeCell()
{
    const std::uint32_t id = ++m_lastCell;
    Cell &cell = m_cells[id];
    cell.deadline = Clock::now() + kCellStartLimit;
    std::string error;
    if (m_policy.wants(Layer::Cgroup)) {
        Policy own = m_policy;
        own.cgroup->name = "cell-" + std::to_string(::getpid()) + "-" + std::to_string(id);
        // The cell itself is one task of its cgroup: the call still gets the policy's count.
        if (own.cgroup->pids)
            *own.cgroup->pids += 1;
        if (!createCgroup(own, 0, cell.cgroup, error)) {
            failCell(id, cell, "cgroup: " + error);
            return;
        }
        std::string dirs;
        for (const std::string &dir : cell.cgroup.dirs)
            dirs += dir + "\n";
        tellDaemon(cells::kCellCgroups, id, dirs);
    }
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        failCell(id, cell, errnoText("socketpair", errno));
        return;
    }
    const int on = 1;
    ::setsockopt(pair[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    cell.socket = pair[0];
    std::vector<CounterFile> counters = openCounters(cell.cgroup);
    const int setup = cellSetup(m_policyText, m_seccomp, m_options, m_policy.uid, counters, error);
    std::vector<int> fds{pair[1]};
    if (setup >= 0)
        fds.push_back(setup);
    for (const CounterFile &counter : counters)
        fds.push_back(counter.fd);
    protocol::MakeCell request;
    request.cell = id;
    request.counters = std::uint32_t(counters.size());
    const bool sent = setup >= 0 && sendWithFds(m_templateControl, &request, sizeof request, fds);
    if (setup >= 0 && !sent)
        error = errnoText("asking the template for a cell", errno);
    closeAll(fds);
    if (!sent)
        failCell(id, cell, error);
}

void Monitor::failCell(std::uint32_t id, Cell &cell, const std::string &why)
{
    if (cell.state == Cell::State::Failed)
        return;
    tellDaemon(cells::kCellFailed, id, why);
    if (cell.socket >= 0)
        ::close(cell.socket);
    cell.socket = -1;
    killCgroup(cell.cgroup);
    cell.state = Cell::State::Failed;
    // A cell that never started has no process for the template to report: it goes now.
    if (cell.cgroup.dirs.empty() || !cgroupHoldsTasks(cell.cgroup)) {
        removeCgroup(cell.cgroup);
        m_cells.erase(id);
    }
}

void Monitor::onCell(std::uint32_t id, Cell &cell)
{
    char message[4096];
    pid_t pid = 0;
    const ssize_t n = receiveWithSender(cell.socket, message, sizeof message, pid);
    if (n <= 0) {
        failCell(id, cell, "the cell ended before it was ready");
        return;
    }
    if (cell.state == Cell::State::Placing && message[0] == 'p' && pid > 0) {
        std::string error;
        if (!cell.cgroup.dirs.empty() && !enterCgroup(cell.cgroup, pid, error)) {
            failCell(id, cell, "cgroup: " + error);
            return;
        }
        cell.state = Cell::State::Starting;
        if (::send(cell.socket, "g", 1, MSG_NOSIGNAL) != 1)
            failCell(id, cell, errnoText("placing the cell", errno));
        return;
    }
    if (cell.state == Cell::State::Starting && message[0] == 'r') {
        tellDaemon(cells::kCellReady, id, {}, cell.socket);
        ::close(cell.socket);
        cell.socket = -1;
        cell.state = Cell::State::Ready;
        return;
    }
    if (message[0] == 'f') {
        // "<layer>\n<message>"
        std::string why(message + 1, std::size_t(n - 1));
        if (const std::size_t newline = why.find('\n'); newline != std::string::npos)
            why.replace(newline, 1, ": ");
        failCell(id, cell, why);
        return;
    }
    failCell(id, cell, "the cell said something unexpected while starting");
}

void Monitor::onDaemon()
{
    cells::ControlRequest request;
    const ssize_t n = ::recv(m_daemon, &request, sizeof request, 0);
    if (n <= 0) {
        m_stopping = true; // the daemon is gone or retired the template
        return;
    }
    if (n != ssize_t(sizeof request))
        return;
    if (request.kind == cells::kMakeCell) {
        makeCell();
    } else if (request.kind == cells::kKillCell) {
        if (const auto found = m_cells.find(request.cell); found != m_cells.end())
            killCgroup(found->second.cgroup);
    }
}

void Monitor::onTemplate()
{
    protocol::CellEnded ended;
    const ssize_t n = ::recv(m_templateControl, &ended, sizeof ended, MSG_DONTWAIT);
    if (n != ssize_t(sizeof ended) || ended.kind != 'd')
        return;
    const auto found = m_cells.find(ended.cell);
    if (found == m_cells.end())
        return;
    Cell &cell = found->second;
    // Its pid namespace died with it; whatever the kernel has not finished yet is killed.
    if (cgroupHoldsTasks(cell.cgroup))
        killCgroup(cell.cgroup);
    removeCgroup(cell.cgroup);
    if (cell.state == Cell::State::Ready)
        tellDaemon(cells::kCellGone, ended.cell, {});
    else if (cell.state != Cell::State::Failed)
        tellDaemon(cells::kCellFailed, ended.cell, "the cell ended before it was ready");
    if (cell.socket >= 0)
        ::close(cell.socket);
    m_cells.erase(found);
}

void Monitor::reap(int signalFd)
{
    signalfd_siginfo info{};
    while (::read(signalFd, &info, sizeof info) == sizeof info) {
        if (info.ssi_signo != SIGCHLD)
            m_stopping = true;
    }
    int status = 0;
    while (const pid_t done = ::waitpid(-1, &status, WNOHANG)) {
        if (done < 0)
            break;
        if (done == m_template) {
            m_templateEnded = true;
            m_templateStatus = status;
        }
    }
}

void Monitor::serve(int signalFd, int listenFd)
{
    // Standard input closing ends the template (the daemon retired it once its calls ended),
    // so does the daemon's connection closing, and SIGTERM.
    while (!m_templateEnded && !m_stopping) {
        std::vector<pollfd> ready{{signalFd, POLLIN, 0},
                                  {STDIN_FILENO, POLLIN, 0},
                                  {m_templateControl, POLLIN, 0},
                                  {m_daemon >= 0 ? m_daemon : listenFd, POLLIN, 0}};
        std::vector<std::uint32_t> starting;
        int timeoutMs = -1;
        for (auto &[id, cell] : m_cells) {
            if (cell.socket < 0)
                continue;
            starting.push_back(id);
            ready.push_back({cell.socket, POLLIN, 0});
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(cell.deadline
                                                                                    - Clock::now())
                                      .count();
            timeoutMs = timeoutMs < 0 ? int(std::max<long>(left, 0))
                                      : std::min(timeoutMs, int(std::max<long>(left, 0)));
        }
        if (::poll(ready.data(), ready.size(), timeoutMs) < 0 && errno != EINTR)
            break;
        if (ready[0].revents)
            reap(signalFd);
        if (ready[1].revents) {
            char byte;
            if (::read(STDIN_FILENO, &byte, 1) <= 0)
                m_stopping = true;
        }
        if (ready[2].revents)
            onTemplate();
        if (ready[3].revents) {
            if (m_daemon < 0)
                acceptDaemon(listenFd);
            else
                onDaemon();
        }
        for (std::size_t i = 0; i < starting.size(); ++i) {
            const auto found = m_cells.find(starting[i]);
            if (found == m_cells.end() || found->second.socket < 0)
                continue;
            if (ready[4 + i].revents)
                onCell(found->first, found->second);
            else if (Clock::now() >= found->second.deadline)
                failCell(found->first, found->second, "the cell was not ready in time");
        }
    }
}

void Monitor::stop(int signalFd, const JobCgroup &templateCgroup)
{
    // Every cell and call dies with the template (its pid namespace).
    if (!m_templateEnded)
        ::kill(m_template, SIGKILL);
    killCgroup(templateCgroup);
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (!m_templateEnded && Clock::now() < deadline) {
        pollfd p{signalFd, POLLIN, 0};
        ::poll(&p, 1, 100);
        reap(signalFd);
    }
    for (auto &[id, cell] : m_cells) {
        killCgroup(cell.cgroup);
        removeCgroup(cell.cgroup);
        if (cell.state == Cell::State::Ready)
            tellDaemon(cells::kCellGone, id, {});
    }
    m_cells.clear();
}

} // namespace

void runTemplateMonitor(const Policy &policy, const std::string &policyText,
                        const SeccompProgram &seccomp, const TemplateOptions &options, char **argv)
{
    if (!policy.wants(Layer::Namespaces) || !policy.wants(Layer::Identity))
        refuse("template", kExitUsage, "a template needs the identity and namespaces layers");
    if (options.uidCount == 0 || policy.uid < options.uidFirst
        || policy.uid - options.uidFirst >= options.uidCount)
        refuse("template", kExitUsage, "the policy's uid is not in --template-uids");
    if (options.uidFirst <= kInsideId)
        refuse("template", kExitUsage,
               "--template-uids must lie above uid " + std::to_string(kInsideId)
                       + ", which the template's user namespace gives its own uid");
    if (::geteuid() != 0)
        refuse("template", kExitIdentity, "a template needs a root monitor (it maps the pool)");
    std::string error;
    const int library = openZygoteLibrary(error);
    if (library < 0)
        refuse("template", kExitUsage, error);

    const sigset_t signals = monitoredSignals();
    ::sigprocmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    const pid_t supervisor = ::getppid();
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0 || ::getppid() != supervisor)
        refuse("identity", kExitIdentity, "the supervisor is gone or cannot be watched");
    const int signalFd = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
    int control[2], go[2], failure[2];
    if (signalFd < 0 || ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, control) != 0
        || ::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(failure, O_CLOEXEC) != 0)
        refuse("identity", kExitIdentity, errnoText("signalfd/socketpair/pipe2", errno));

    const auto started = Clock::now();
    const int workspaceErrno = enterWorkspace(policy);
    const pid_t pid = cloneProcess(cloneFlags(policy));
    if (pid < 0)
        refuse("namespaces", kExitNamespaces, errnoText("clone", errno));
    if (pid == 0) {
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::signal(SIGPIPE, SIG_DFL);
        ::close(go[1]);
        ::close(failure[0]);
        ::close(control[0]);
        ::close(signalFd);
        if (!readFromMonitor(go[0], 'g'))
            ::_exit(kExitIdentity);
        Launch launch{go[0], -1, -1, -1, workspaceErrno};
        launch.programFd = library; // the template hands it to each cell
        // One user namespace per call, made by the call itself below the template's.
        launch.nestedUserNamespaces = 1u << 20;
        runTemplateProcess(policy, launch, argv, control[1], failure[1]);
    }
    (void)!::chdir("/");
    ::close(library);
    ::close(go[0]);
    ::close(failure[1]);
    ::close(control[1]);

    JobCgroup cgroup;
    auto abandon = [&](const char *layer, int code, const std::string &message) {
        ::kill(pid, SIGKILL);
        killCgroup(cgroup);
        ::waitpid(pid, nullptr, 0);
        removeCgroup(cgroup);
        refuse(layer, code, message);
    };
    if (!writeTemplateIdMaps(pid, policy, options, error))
        abandon("namespaces", kExitNamespaces, error);
    (void)!::write(go[1], "g", 1);
    if (policy.wants(Layer::Cgroup)
        && !(createCgroup(policy, ::getpid(), cgroup, error) && enterCgroup(cgroup, pid, error)))
        abandon("cgroup", kExitCgroup, error);
    (void)!::write(go[1], "p", 1);

    // Ready ('r' on the control socket), or failed (its reason on the failure pipe).
    {
        pollfd p[2] = {{control[0], POLLIN, 0}, {failure[0], POLLIN, 0}};
        char byte = 0;
        const int ready = ::poll(p, 2, 60000);
        if (ready <= 0 || !(p[0].revents & POLLIN) || ::recv(control[0], &byte, 1, 0) != 1
            || byte != 'r') {
            std::string failed;
            char buf[4096];
            ssize_t got;
            while ((got = ::read(failure[0], buf, sizeof buf)) > 0)
                failed.append(buf, static_cast<std::size_t>(got));
            const std::size_t nl = failed.find('\n');
            int status = 0;
            ::waitpid(pid, &status, 0);
            removeCgroup(cgroup);
            const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitNamespaces;
            if (nl == std::string::npos)
                refuse("template", code, failed.empty() ? "the template did not start" : failed);
            reportRefused(failed.substr(0, nl), code, failed.substr(nl + 1));
            ::_exit(code);
        }
    }
    ::close(failure[0]);
    const int listenFd = listenOn(options.socketPath, error);
    if (listenFd < 0)
        abandon("template", kExitUsage, error);
    std::vector<std::string> layers;
    for (Layer l : policy.layers)
        layers.push_back(layerName(l));
    reportStarted(pid, layers, cgroup.dirs);

    Monitor monitor(policy, policyText, seccomp, options, pid, control[0]);
    monitor.serve(signalFd, listenFd);
    ::unlink(options.socketPath.c_str());
    ::close(listenFd);
    monitor.stop(signalFd, cgroup);

    Exit record;
    record.killed = monitor.stopping();
    record.wallMs = std::int64_t(millisecondsSince(started));
    const CgroupStats stats = cgroupStats(cgroup);
    removeCgroup(cgroup);
    const int status = monitor.templateStatus();
    if (WIFEXITED(status))
        record.exitCode = WEXITSTATUS(status);
    else
        record.signal = WTERMSIG(status);
    record.cpuMs = std::int64_t(stats.cpuNanoseconds.value_or(0) / 1000000);
    if (stats.peakMemoryBytes)
        record.peakMemoryKb = std::int64_t(*stats.peakMemoryBytes / 1024);
    record.oomKilled = stats.oomKilled;
    reportExit(record);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

} // namespace cmcp::jail
