#!/bin/sh
# Runs cmcp-bench and the SDK latency script back to back, so that their figures come from one
# sitting of the same machine. From the repository root:
#
#   tests/bench/run_all.sh [BUILD_DIR]        (default: build)
#
# Results are printed and kept in BUILD_DIR/bench-results/. See docs/benchmarks.md.
set -u
build=${1:-build}
out="$build/bench-results"
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
status=0
"$build/tests/bench/cmcp-bench" > "$out/cmcp-bench-$stamp.md" || status=1
cat "$out/cmcp-bench-$stamp.md"
if [ -d tests/clients/node_modules/@modelcontextprotocol/sdk ]; then
    node tests/bench/sdk_latency.mjs --cmcpd "$build/server/cmcpd-conformance" > "$out/sdk-latency-$stamp.md" || status=1
    cat "$out/sdk-latency-$stamp.md"
else
    echo "tests/clients/node_modules is missing: run 'npm ci' in tests/clients for the SDK figures" >&2
    status=1
fi
exit $status
