#pragma once

#include "sandbox/JobResult.h"
#include "mcp/ToolResult.h"

#include <QJsonObject>
#include <QString>

#include <optional>

namespace cmcp {

class OutputHandleStore;

// The parts of system_run_command's and system_run_python's results that do not depend on
// the kind of job.
namespace systemresults {

// A job the jail refused to start, or the supervisor could not run: why, in the tool's words.
std::optional<QString> notRun(const JobResult &result);

// The accounting record, with exit_code always a number and a message for abnormal endings
// that names the job as `what` ("the command").
QJsonObject accounting(const JobResult &result, int timeoutSeconds, const QString &what);

// Output cut to fit gets a handle to its complete copy (the spill file), which output_read
// serves to this session for OUTPUT_HANDLE_SECONDS.
void addOutputHandles(QJsonObject &value, const JobResult &result, OutputHandleStore *handles,
                      const QString &sessionId);

} // namespace systemresults

} // namespace cmcp
