// What the jail tells its supervisor: the records of jail/protocol/Report.h on --report-fd,
// written only by the monitor, and, for a refusal, one line on stderr:
// "cmcp-jail: <layer>: <message>".
#pragma once

#include "jail/protocol/Report.h"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cmcp::jail {

void setReportFd(int fd);

// The JSON record only (the stderr line was written by whoever failed).
void reportRefused(const std::string &layer, int code, const std::string &message);
// The stderr line and the record, then exit with `code`. For the monitor, before the job runs.
[[noreturn]] void refuse(const std::string &layer, int code, const std::string &message);

void reportStarted(pid_t pid, const std::vector<std::string> &layers,
                   const std::vector<std::string> &cgroups = {});

void reportExit(const Exit &record);

// The stderr line alone: "cmcp-jail: <layer>: <message>".
void writeRefusalLine(const std::string &layer, const std::string &message);

} // namespace cmcp::jail

namespace cmcp::jail {
// For the job process, before its exec: the stderr line, then "<layer>\n<message>" on
// `monitorFd` (the monitor turns it into the refused record), then exit with `code`.
[[noreturn]] void failJob(int monitorFd, const std::string &layer, int code,
                          const std::string &message);
} // namespace cmcp::jail
