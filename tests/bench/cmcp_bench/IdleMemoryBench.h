// The memory part: the RSS of a fresh cmcpd before and after opening many idle sessions (legacy
// SSE streams; Streamable HTTP sessions with their GET stream), the cost of a call while they
// are open, health and RSS after closing them, over several cycles.
#pragma once

#include "Harness.h"
#include "Options.h"

namespace cmcp::bench {

PartOutcome runMemoryPart(const Options &o, const Deadline &deadline);

} // namespace cmcp::bench
