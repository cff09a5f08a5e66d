// The report descriptor's JSON lines (see report.h). Writes are whole lines with one write(2)
// each, so a supervisor reading the pipe never sees half a record; a supervisor that went away
// (EPIPE, SIGPIPE is ignored by the monitor) costs nothing.
#include "jail/report.h"

#include "jail/protocol/ReportFields.h"

#include "posix/WriteAll.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

namespace cmcp::jail {

namespace {

namespace field = cmcp::jail_protocol::report;

int g_reportFd = -1;

void writeText(int fd, const std::string &text)
{
    writeAll(fd, text.data(), text.size());
}

void writeRecord(const nlohmann::json &record)
{
    if (g_reportFd >= 0)
        writeText(g_reportFd,
                  record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

} // namespace

void setReportFd(int fd)
{
    g_reportFd = fd;
}

void writeRefusalLine(const std::string &layer, const std::string &message)
{
    writeText(STDERR_FILENO, "cmcp-jail: " + layer + ": " + message + "\n");
}

void reportRefused(const std::string &layer, int code, const std::string &message)
{
    writeRecord({{field::kEvent, field::kRefused},
                 {field::kLayer, layer},
                 {field::kCode, code},
                 {field::kMessage, "cmcp-jail: " + layer + ": " + message}});
}

void refuse(const std::string &layer, int code, const std::string &message)
{
    writeRefusalLine(layer, message);
    reportRefused(layer, code, message);
    ::_exit(code);
}

void reportStarted(pid_t pid, const std::vector<std::string> &layers,
                   const std::vector<std::string> &cgroups)
{
    // The cgroups go with it so that the supervisor can remove them should this jail die
    // (SIGKILL) before it removes them itself.
    writeRecord({{field::kEvent, field::kStarted},
                 {field::kPid, pid},
                 {field::kLayers, layers},
                 {field::kCgroups, cgroups}});
}

void reportExit(const ExitRecord &r)
{
    nlohmann::json record = {{field::kEvent, field::kExit},    {field::kExitCode, nullptr},
                             {field::kSignal, nullptr},        {field::kWallMs, r.wallMs},
                             {field::kCpuMs, r.cpuMs},         {field::kPeakMemoryKb, nullptr},
                             {field::kOomKilled, r.oomKilled}, {field::kPidsRefused, r.pidsRefused},
                             {field::kKilled, r.killed}};
    if (r.exitCode)
        record[field::kExitCode] = *r.exitCode;
    if (r.signal)
        record[field::kSignal] = *r.signal;
    if (r.peakMemoryKb)
        record[field::kPeakMemoryKb] = *r.peakMemoryKb;
    if (r.seccompDenials) {
        nlohmann::json denied = nlohmann::json::array();
        for (const SeccompDenials::Count &c : r.seccompDenials->counts())
            denied.push_back({{field::kSyscall, c.syscall},
                              {field::kErrno, c.errnoName},
                              {field::kCount, c.count}});
        record[field::kSeccompDenied] = std::move(denied);
        if (r.seccompDenials->unnamed() > 0)
            record[field::kSeccompDeniedUnnamed] = r.seccompDenials->unnamed();
    }
    writeRecord(record);
}

} // namespace cmcp::jail

namespace cmcp::jail {
void failJob(int monitorFd, const std::string &layer, int code, const std::string &message)
{
    writeRefusalLine(layer, message);
    if (monitorFd >= 0)
        writeText(monitorFd, layer + "\n" + message);
    ::_exit(code);
}
} // namespace cmcp::jail
