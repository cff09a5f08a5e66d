// The floors: what the lean client and the kernel cost alone, against peers that do no server
// work (a socket that answers at once, /bin/cat), to set beside the daemon's figures.
#pragma once

#include "Harness.h"

namespace cmcp::bench {

// The lean HTTP client against a socket that answers every request at once with a fixed
// response of a tools/call's size: loopback TCP plus the client, no server work.
Run runTcpFloor(int n, int warmup, const Deadline &deadline);
// A line through /bin/cat: two pipes, two processes, no server work.
Run runPipeFloor(int n, int warmup, const Deadline &deadline);

} // namespace cmcp::bench
