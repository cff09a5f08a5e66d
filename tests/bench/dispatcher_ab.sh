#!/usr/bin/env bash
# Same-run A/B of cmcpd's two event dispatchers (MCP_EVENT_DISPATCHER=epoll and qt): for each
# count of idle legacy SSE streams, cmcp-bench's memory part runs against a fresh daemon with
# each dispatcher in turn, so that the machine's drift falls on both. Each run reports a
# trivial call's daemon CPU with no idle stream open and with N open, and RSS per stream.
#
#   tests/bench/dispatcher_ab.sh [COUNTS] [OUT]      e.g. dispatcher_ab.sh "1000 10000"
#
# 10,000 streams need as many descriptors in the bench and in the daemon, and sessions above
# the default MCP_MAX_SESSIONS: the soft limit is raised to the hard one here, and the daemon
# is allowed 20,000 sessions.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
counts=${1:-1000 10000} out=${2:-$root/build/bench-results/dispatcher}
bench=$root/build/tests/bench/cmcp-bench
mkdir -p -- "$out"
ulimit -n "$(ulimit -Hn)"
for n in $counts; do
    for dispatcher in epoll qt; do
        echo "idle $n, $dispatcher"
        MCP_EVENT_DISPATCHER=$dispatcher "$bench" --parts memory --no-idle-streamable \
            --idle-cycles 1 --idle "$n" --daemon-set MCP_MAX_SESSIONS=20000 \
            >"$out/memory-$dispatcher-$n.txt" 2>&1
        grep -A2 '^| idle kind' "$out/memory-$dispatcher-$n.txt" | tail -1
    done
done
echo "results in $out"
