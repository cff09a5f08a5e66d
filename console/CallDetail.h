#pragma once

#include "common/AdminCallRecords.h"

#include <QString>

namespace cmcp {

// The detail pane's text for one call: who, when, how it ended, the full (redacted) arguments,
// the output head and tail, and the accounting.
QString callDetailText(const admin::CallRecord &call);

} // namespace cmcp
