#pragma once

#include "mcp/ToolCallRecord.h"

#include <QJsonObject>

namespace cmcp {
struct ToolResult;
}

namespace cmcp::audit {

// The fields of the audit records of one tools/call (AuditChain::seal adds seq, prev and hash).
// Arguments go through redactSecrets. Of a result only a summary is kept (isError, sizes, the
// error message of an unstructured error, the job accounting of the system tools), never its
// content: file contents, command output and environment values stay out of the log.
QJsonObject callStartedFields(const ToolCallRecord &call);
// The arguments are in the call_started record of the same call id only.
QJsonObject callFinishedFields(const ToolCallRecord &call, const ToolResult *result);

// The longest argument string kept whole, in characters; longer ones keep their start, length
// and sha256.
inline constexpr qsizetype MaxArgumentStringLength = 1024;
// The longest error message kept in a record, in characters.
inline constexpr qsizetype MaxErrorMessageLength = 2000;

} // namespace cmcp::audit
