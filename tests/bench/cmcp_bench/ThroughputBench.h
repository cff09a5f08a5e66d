// The throughput part: C concurrent Streamable HTTP sessions, K calls each, driven from one epoll
// loop in this process, against one spawned cmcpd.
#pragma once

#include "Harness.h"
#include "Options.h"

namespace cmcp::bench {

PartOutcome runThroughputPart(const Options &o, const Deadline &deadline);

} // namespace cmcp::bench
