#pragma once

#include "mcp/ToolCallRecord.h"

#include <QJsonObject>

namespace cmcp {
struct ToolResult;
}

// The definition of a call's audit records, as QJsonObjects: what each field holds, built with
// Qt's JSON objects and redactSecrets over the whole arguments, in the plainest form. The daemon
// writes the same records straight to their bytes (audit::callStartedRecord and
// callFinishedRecord); sealed by audit::seal, these fields must give the very same lines, which
// tst_auditrecordbytes checks. They live here, beside that test, so that the daemon has one
// definition of its records.
namespace cmcp::audit::reference {

// `at` is the record's time, in ms since the epoch.
QJsonObject callStartedFields(const ToolCallRecord &call, qint64 at);
QJsonObject callFinishedFields(const ToolCallRecord &call, const ToolResult *result, qint64 at);

} // namespace cmcp::audit::reference
