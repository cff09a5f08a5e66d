#pragma once

#include "tools/common/ToolFamily.h"

namespace cmcp {

// Registers job_status, job_output, job_write_stdin, job_kill, job_attach, job_list and
// output_read on `server`, over the server's background jobs and output handles (JobRunner).
// Each reaches only the calling session's jobs and handles.
bool registerJobTools(const ToolFamily &family, QString *error);

} // namespace cmcp
