#!/usr/bin/env bash
# Runs the official MCP conformance suite against a freshly started cmcpd with its fixtures.
# Usage: run-conformance.sh CMCPD NODE22 CONFORMANCE_JS OUTPUT_DIR
set -euo pipefail

cmcpd=$1 node=$2 suite=$3 output=$4
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT

# Without root the identity layer is unavailable and the default SANDBOX_REQUIRE would stop
# cmcpd; the suite runs no job, so it then requires no layer.
sandbox=()
[[ $(id -u) -eq 0 ]] || sandbox=(--set SANDBOX_REQUIRE=)
"$cmcpd" --port 0 --conformance-fixtures "${sandbox[@]}" 2>"$log" &
pid=$!
port=
for _ in $(seq 100); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    [[ -n $port ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "cmcpd exited before listening" >&2; exit 1; }
    sleep 0.1
done
[[ -n $port ]] || { cat "$log" >&2; echo "cmcpd did not start listening within 10 s" >&2; exit 1; }

rm -rf "$output"
status=0
"$node" "$suite" server --url "http://127.0.0.1:$port/mcp" --suite all \
    --expected-failures "$here/expected-failures.yaml" --output-dir "$output" || status=$?
# The suite's own summary ends with "Total: N passed, N failed"; a failure anywhere fails the test.
kill -0 "$pid" 2>/dev/null || { echo "cmcpd died during the suite" >&2; cat "$log" >&2; exit 1; }
exit "$status"
