#!/usr/bin/env bash
# What the audit log costs concurrent calls: cmcp-bench's closed-loop throughput with 32
# Streamable HTTP sessions, each daemon once with AUDIT_LOG off and once with it on (every record
# durable before its result), alternating, ROUNDS times. Prints calls/s and the daemon's CPU per
# call (all its threads) per run, and the medians with the audited ÷ unaudited ratio per daemon.
# The log goes to DIR (the disk measured).
#
#   tests/bench/audit_throughput.sh DIR ROUNDS CMCPD...
#
# Each daemon is a cmcpd-conformance (cmcp-bench calls its test tools) and needs its cmcp-jail
# in jail/ beside it. cmcp-bench is this tree's.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(readlink -f -- "$1") rounds=$2
shift 2
bench=$root/build/tests/bench/cmcp-bench
declare -A runs cpus
for ((round = 1; round <= rounds; ++round)); do
    for daemon in "$@"; do
        for audit in off on; do
            log=
            [[ $audit == on ]] && log=$dir/cmcp-audit-throughput-$$/audit.jsonl
            rm -rf -- "$dir/cmcp-audit-throughput-$$"
            read -r rate cpu < <("$bench" --cmcpd "$daemon" --parts throughput --concurrency 32 \
                --calls 200 --daemon-set "AUDIT_LOG=$log" |
                awk -F'|' '$2 ~ /^ *32 *$/ {gsub(/ /, "", $7); gsub(/ /, "", $11); print $7, $11}')
            echo "round $round $daemon audit $audit: $rate calls/s, daemon CPU $cpu µs/call"
            runs[$daemon $audit]+="$rate "
            cpus[$daemon $audit]+="$cpu "
        done
    done
done
rm -rf -- "$dir/cmcp-audit-throughput-$$"
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for daemon in "$@"; do
    off=$(echo "${runs[$daemon off]}" | median) on=$(echo "${runs[$daemon on]}" | median)
    cpuOff=$(echo "${cpus[$daemon off]}" | median) cpuOn=$(echo "${cpus[$daemon on]}" | median)
    echo "$daemon: median $off calls/s unaudited, $on audited, ratio $(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.2f", a / b}');" \
        "daemon CPU $cpuOff → $cpuOn µs/call"
done
