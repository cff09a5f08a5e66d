// The core part: tools/call of a trivial tool through McpServer in this process (parse,
// dispatch, serialize, no transport): the "inside the server" time.
#pragma once

#include "Harness.h"

namespace cmcp::bench {

struct CoreRuns
{
    Run total, parse, dispatch, ping;
};

// `n` tools/call of test_simple_text (timed whole and as parse and dispatch), then `n` pings.
CoreRuns runCore(int n, int warmup, const Deadline &deadline);

} // namespace cmcp::bench
