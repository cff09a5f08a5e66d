// The report descriptor's records (jail/protocol/Report.h writes them). Writes are whole lines
// with one write(2) each, so a supervisor reading the pipe never sees half a record; a supervisor
// that went away (EPIPE, SIGPIPE is ignored by the monitor) costs nothing.
#include "jail/report.h"

#include "posix/WriteAll.h"

#include <unistd.h>

namespace cmcp::jail {

namespace {

int g_reportFd = -1;

void writeText(int fd, const std::string &text)
{
    writeAll(fd, text.data(), text.size());
}

void writeRecord(const ReportRecord &record)
{
    if (g_reportFd >= 0)
        writeText(g_reportFd, reportLine(record));
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
    writeRecord(Refusal{layer, code, "cmcp-jail: " + layer + ": " + message});
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
    writeRecord(Started{pid, layers, cgroups});
}

void reportExit(const Exit &record)
{
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
