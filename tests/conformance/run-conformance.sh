#!/usr/bin/env bash
# Runs an official MCP conformance suite against a freshly started cmcpd-conformance (cmcpd with
# the suite's fixtures).
# Usage: run-conformance.sh CMCPD_CONFORMANCE NODE22 CONFORMANCE_JS OUTPUT_DIR EXPECTED_FAILURES UID_BASE
#                           [SUITE ARGUMENTS...]
# The daemon runs in a temporary directory of its own (sandbox root, audit log, admin socket)
# with its own uid pool, so that several runs can go at once. SUITE ARGUMENTS choose what runs
# (--suite all, --requirements 2026-07-28, --scenario NAME ...); several --scenario groups
# separated by "--" are run one after another against the same daemon.
set -euo pipefail

cmcpd=$1 node=$2 suite=$3 output=$4 expected=$5 uid_base=$6
shift 6
[[ $# -gt 0 ]] || set -- --suite all
work=$(mktemp -d)
log=$work/cmcpd.log
pid=
trap '[[ -n $pid ]] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; rm -rf "$work"' EXIT

settings=(--set "SANDBOX_ROOT=$work/sandbox" --set "AUDIT_LOG=$work/audit.jsonl"
          --set "ADMIN_SOCKET=$work/admin.sock" --set "SANDBOX_UID_BASE=$uid_base"
          --set SANDBOX_UID_COUNT=64)
# Without root the identity layer is unavailable and the default SANDBOX_REQUIRE would stop
# cmcpd; the suites run no job, so they then require no layer.
[[ $(id -u) -eq 0 ]] || settings+=(--set SANDBOX_REQUIRE=)
(cd "$work" && exec "$cmcpd" --host 127.0.0.1 --port 0 "${settings[@]}") \
    2>"$log" &
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
run=0
# The suite's own summary ends with "Total: N passed, N failed"; a failure that the expected
# failures do not name fails the test, and so does an expected failure that passes.
while [[ $# -gt 0 ]]; do
    group=()
    while [[ $# -gt 0 && $1 != -- ]]; do group+=("$1"); shift; done
    [[ $# -gt 0 ]] && shift
    run=$((run + 1))
    "$node" "$suite" server --url "http://127.0.0.1:$port/mcp" "${group[@]}" \
        --expected-failures "$expected" --output-dir "$output/$run" || status=$?
done
kill -0 "$pid" 2>/dev/null || { echo "cmcpd died during the suite" >&2; cat "$log" >&2; exit 1; }
exit "$status"
