// Sequential tools/call round trips against a spawned cmcpd on each transport, back to back or
// paced (`thinkUs` apart, as a slower client sends them), with the daemon's CPU time per call.
#pragma once

#include "Daemon.h"
#include "Harness.h"
#include "Options.h"

namespace cmcp::bench {

// Streamable HTTP: POST /mcp on one keep-alive connection.
Run runStreamable(const Daemon &daemon, int n, int warmup, int thinkUs, const Deadline &deadline);
// Legacy SSE: POST 202, the reply an event on the session's stream.
Run runSse(const Daemon &daemon, int n, int warmup, int thinkUs, const Deadline &deadline);
// stdio: a daemon of its own (spawned with --stdio), a line in and a line out.
Run runStdio(const Options &o, int n, int warmup, int thinkUs, const Deadline &deadline);

} // namespace cmcp::bench
