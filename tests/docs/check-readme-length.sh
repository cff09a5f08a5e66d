#!/usr/bin/env bash
# The README is the first screen, the quick start and the clients; everything else lives in docs/.
# Usage: check-readme-length.sh README MAX_LINES
set -euo pipefail
readme=$1 max=$2
lines=$(wc -l < "$readme")
if (( lines > max )); then
    echo "$readme has $lines lines, more than $max: move what a newcomer does not need first to a page of docs/" >&2
    exit 1
fi
echo "$readme has $lines lines (at most $max)"
