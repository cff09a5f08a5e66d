#pragma once

#include "tools/jobs/JobServices.h"

namespace cmcp {

class McpServer;

// Registers job_status, job_output, job_write_stdin, job_kill, job_attach, job_list and
// output_read on
// `server`. Each reaches only the calling session's jobs and handles.
void registerJobTools(McpServer &server, const JobServices &services);

} // namespace cmcp
