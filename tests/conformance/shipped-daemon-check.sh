#!/usr/bin/env bash
# The shipped daemon carries none of the conformance suites' test tools: they live only in the
# test build cmcpd-conformance. cmcpd refuses the option that once exposed them, and neither the
# fixtures' code (its symbols) nor their names are in its binary. (A plain "fixture" would also
# match the source tree's path, which the binary holds for its default settings file.)
# Usage: shipped-daemon-check.sh CMCPD
set -euo pipefail

cmcpd=$1
status=0
refusal=$("$cmcpd" --conformance-fixtures --version 2>&1 >/dev/null) || status=$?
if [[ $status -ne 2 || $refusal != *"conformance-fixtures"* ]]; then
    echo "cmcpd --conformance-fixtures: expected a refusal with status 2, got $status: $refusal" >&2
    exit 1
fi
fixtures='ConformanceFixtures|conformance fixtures|test_simple_text|test://static-text'
if grep -a -E -q "$fixtures" "$cmcpd"; then
    echo "$cmcpd holds the conformance fixtures:" >&2
    grep -a -E -o "[[:print:]]*($fixtures)[[:print:]]*" "$cmcpd" | head -5 >&2
    exit 1
fi
