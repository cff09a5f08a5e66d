#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time: the committed seed corpus is replayed first (the
# regression inputs), then new inputs are searched; they go to WORK_DIR, never into the sources.
# Usage: run-fuzzer.sh TARGET_BINARY SEED_CORPUS_DIR WORK_DIR SECONDS
# Exit status: 0 when nothing was found; libFuzzer's non-zero status and the crashing input
# (WORK_DIR/crash-*) otherwise.
set -euo pipefail
readonly target=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work/corpus" "$work/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# -rss_limit_mb and -timeout turn runaway memory and hangs into findings too.
exec "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds"
