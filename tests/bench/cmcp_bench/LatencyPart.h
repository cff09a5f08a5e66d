// The latency parts (core, floor, http, sse, stdio): every part once per repetition,
// interleaved, so that noise spreads evenly; one table of the medians.
#pragma once

#include "Harness.h"
#include "Options.h"

namespace cmcp::bench {

PartOutcome runLatencyPart(const Options &o, const Deadline &deadline);

} // namespace cmcp::bench
