#pragma once

#include "tools/common/ToolFamily.h"

namespace cmcp {

// Registers file_transfer on `server`: a short-lived URL, a ticket of `transfers` that the HTTP
// door serves (TransferEndpoint), to download or upload one file of the workspace the call works
// in, without base64. `transfers` outlives `server`'s calls.
bool registerTransferTools(const ToolFamily &family, QString *error);

} // namespace cmcp
