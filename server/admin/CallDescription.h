#pragma once

#include "common/AdminCallRecords.h"
#include "mcp/ToolCallRecord.h"

namespace cmcp {

struct ToolResult;

// A tool call as the admin channel shows it (admin::CallRecord): arguments
// with secrets redacted and strings beyond 4,096 characters cut, and of the result only a head
// and tail of its text and the structured value with long strings cut, so that one event stays
// small whatever the tool was given or returned.
admin::CallRecord describeCall(const ToolCallRecord &call, bool finished, const ToolResult *result);

} // namespace cmcp
