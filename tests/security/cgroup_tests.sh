#!/usr/bin/env bash
# Security tests for cmcp-jail's cgroup layer: jobs run through the real jail with the layers
# identity, rlimits and cgroup (no rlimits set, so every bound seen here is the cgroup's), and
# the monitor's report (--report-fd) is checked for the accounting.
#   cgroup_tests.sh <path to cmcp-jail> <case> <test uid>
# Exit 0 pass, 1 fail, 77 skip (with the reason on stdout): not root, or no writable cgroup
# hierarchy with the controller a case needs.
source "$(dirname "$0")/lib.sh"

REPORT=$TMPROOT/report
NAME=sectest-$TUID # the job's cgroup name, distinct per case so cases can run in parallel

# policy CGROUP-JSON [LAYERS-JSON]
policy() {
    local cgroup=$1 layers=${2:-'["identity","rlimits","cgroup"]'}
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/usr/bin:/bin\",\"LANG\":\"C\"},\"layers\":$layers"
    [ "$layers" = '["identity","rlimits"]' ] || POLICY+=",\"cgroup\":$cgroup"
    POLICY+="}"
}

# jail_report SECONDS PROGRAM ARGS...: like jail, with the monitor's JSON lines in $REPORT.
jail_report() {
    local secs=$1; shift
    timeout -k 2 "$secs" "$JAIL" --policy-fd 9 --report-fd 8 -- "$@" 9<<<"$POLICY" 8>"$REPORT" >"$OUT" 2>"$ERR"
    RC=$?
}

# exit_field KEY: KEY's value in the report's exit record ("true", "null", a number).
exit_field() {
    grep '"event": *"exit"' "$REPORT" | sed -n "s/.*\"$1\": *\([^,}]*\).*/\1/p"
}
expect_exit_field() {
    local value
    value=$(exit_field "$1")
    [ "$value" = "$2" ] || fail "report: $1 is '$value', expected $2 ($(cat "$REPORT" 2>/dev/null))"
}
# exit_number KEY: like exit_field, failing unless it is a number.
exit_number() {
    local value
    value=$(exit_field "$1")
    [[ $value =~ ^[0-9]+$ ]] || fail "report: $1 is '$value', not a number ($(cat "$REPORT" 2>/dev/null))"
    echo "$value"
}

# Mount points: every cgroup hierarchy, and the one holding CONTROLLER (its v1 mount, or the
# cgroup2 mount when its root lists the controller).
cgroup_mounts() {
    local -a f
    local i
    while read -r -a f; do
        for ((i = 6; i < ${#f[@]}; i++)); do [ "${f[i]}" = - ] && break; done
        case ${f[i + 1]:-} in cgroup | cgroup2) echo "${f[4]} ${f[i + 1]} ${f[i + 3]}" ;; esac
    done </proc/self/mountinfo
}
controller_mount() {
    local mp type options
    while read -r mp type options; do
        if [ "$type" = cgroup ] && [[ ,$options, == *,$1,* ]]; then echo "$mp"; return 0; fi
        if [ "$type" = cgroup2 ] && grep -qw -- "$1" "$mp/cgroup.controllers" 2>/dev/null; then
            echo "$mp"; return 0
        fi
    done < <(cgroup_mounts)
    return 1
}
writable_hierarchy() { mkdir "$1/cmcp-probe-$TUID" 2>/dev/null && rmdir "$1/cmcp-probe-$TUID"; }

# need_cgroup [CONTROLLER...]: root, and a writable hierarchy for each controller (or any
# writable hierarchy at all without arguments); skips with the reason otherwise.
need_cgroup() {
    need_root
    local controller mp any=
    for controller in "$@"; do
        mp=$(controller_mount "$controller") || skip "no $controller cgroup controller on this host"
        writable_hierarchy "$mp" || skip "the cgroup hierarchy at $mp ($controller) is not writable"
    done
    while read -r mp _; do writable_hierarchy "$mp" && any=1; done < <(cgroup_mounts)
    [ -n "$any" ] || skip "no writable cgroup hierarchy on this host"
}

# The job's processes that are still alive (zombies waiting for a reaper outside the job are
# dead already).
live_processes() { ps -o stat= -u "$TUID" 2>/dev/null | grep -vc '^Z'; }
expect_all_dead() {
    local _
    for _ in $(seq 20); do [ "$(live_processes)" -eq 0 ] && return 0; sleep 0.05; done
    fail "$(live_processes) processes of uid $TUID outlived the job: $(ps -o pid,stat,args -u "$TUID" | tr '\n' ';')"
}
# No directory named $1 (default: $NAME) is left beneath cmcp/ in any hierarchy.
expect_no_cgroup_left() {
    local mp
    while read -r mp _; do
        [ ! -e "$mp/cmcp/${1:-$NAME}" ] || fail "$mp/cmcp/${1:-$NAME} is left behind"
    done < <(cgroup_mounts)
}

case "$CASE" in

forkbomb)
    # Bounded by pids.max alone (no RLIMIT_NPROC here): the job sees fork fail, the jail
    # returns long before the sleeps would end, and nothing of the job survives it.
    need_cgroup pids
    policy "{\"pids\":16,\"name\":\"$NAME\"}"
    start=$(date +%s%N)
    jail_report 30 /usr/bin/sh -c 'i=0; while [ $i -lt 500 ]; do /usr/bin/sleep 30 & i=$((i+1)); echo $i >"$0/spawned"; done; echo spawned-all' "$WS"
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    n=$(cat "$WS/spawned" 2>/dev/null || echo 0)
    grep -q spawned-all "$OUT" && fail "all 500 background processes were spawned"
    grep -Eqi 'fork|resource temporarily unavailable' "$ERR" || fail "no fork failure reported"
    [ "$n" -lt 16 ] || fail "$n processes spawned, pids limit 16"
    [ "$n" -ge 8 ] || fail "only $n processes spawned: the bomb did not really run"
    [ "$ms" -lt 10000 ] || fail "the jail returned after $ms ms: it waited for the sleeps"
    [ -n "$(exit_field wall_ms)" ] || fail "the monitor wrote no exit record"
    expect_all_dead
    expect_no_cgroup_left
    pass "stopped at $n background processes (pids 16), jail back in $ms ms"
    ;;

memory-bomb)
    # 64 MiB: a 1 GiB allocation is OOM-killed inside the job and the report says so; the
    # same without Python (tail keeps an endless "line" of zeros in memory).
    need_cgroup memory
    policy "{\"memory_bytes\":67108864,\"name\":\"$NAME\"}"
    jail_report 30 /usr/bin/sh -c '/usr/bin/head -c 600M /dev/zero | /usr/bin/tail -n 1 >/dev/null; echo "tail=$?"'
    expect_rc 0
    grep -q '^tail=137$' "$OUT" || fail "tail was not SIGKILLed: $(cat "$OUT")"
    expect_exit_field oom_killed true
    if [ -x /usr/bin/python3 ]; then
        jail_report 30 /usr/bin/python3 -c 'b = bytearray(1 << 30); print("allocated")'
        grep -q allocated "$OUT" && fail "1 GiB was allocated under a 64 MiB limit"
        expect_rc 137 "SIGKILL by the OOM killer"
        expect_exit_field oom_killed true
        expect_exit_field signal 9
        peak=$(exit_number peak_memory_kb)
        [ "$peak" -le $((65536 + 1024)) ] || fail "peak memory ${peak} kB above the 64 MiB limit"
        [ "$peak" -ge 32768 ] || fail "peak memory ${peak} kB: the bomb never approached the limit"
    fi
    expect_all_dead
    expect_no_cgroup_left
    pass "OOM-killed at a peak of ${peak:-?} kB (limit 65536 kB)"
    ;;

address-space)
    # The limit is on memory, not address space: 4 GiB reserved, 16 MiB touched, under 64 MiB.
    need_cgroup memory
    [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 to reserve address space"
    policy "{\"memory_bytes\":67108864,\"name\":\"$NAME\"}"
    jail_report 30 /usr/bin/python3 -c '
import mmap
reserved = mmap.mmap(-1, 4 << 30, flags=mmap.MAP_PRIVATE | getattr(mmap, "MAP_NORESERVE", 0x4000))
reserved[0:16 << 20] = b"x" * (16 << 20)
print([l for l in open("/proc/self/status") if l.startswith("VmPeak")][0].split()[1])'
    expect_rc 0 "not killed"
    vmpeak=$(head -1 "$OUT")
    [[ $vmpeak =~ ^[0-9]+$ ]] && [ "$vmpeak" -ge $((4 << 20)) ] || fail "VmPeak '$vmpeak' kB: 4 GiB were not reserved"
    expect_exit_field oom_killed false
    pass "VmPeak $vmpeak kB under a 64 MiB memory limit"
    ;;

cpu-percent)
    # 10% of one CPU: a busy loop of 1 s wall gets about 100 ms; the same loop unlimited, more
    # than twice that. The upper bound holds however busy the machine is; the comparison only
    # shows the bound meant something, and on a machine that other work keeps busy the unlimited
    # loop may get little more than the limited one, so the pair is measured up to three times.
    need_cgroup cpu
    for attempt in 1 2 3; do
        policy "{\"cpu_percent\":10,\"name\":\"$NAME\"}"
        jail_report 20 /usr/bin/timeout 1 /usr/bin/sh -c 'while :; do :; done'
        expect_rc 124 "stopped by timeout(1)"
        limited=$(exit_number cpu_ms)
        [ "$limited" -le 250 ] || fail "$limited ms of CPU in 1 s at cpu_percent 10"
        [ "$limited" -ge 25 ] || fail "$limited ms of CPU: the loop hardly ran"
        policy "{\"name\":\"$NAME\"}"
        jail_report 20 /usr/bin/timeout 1 /usr/bin/sh -c 'while :; do :; done'
        full=$(exit_number cpu_ms)
        [ "$full" -gt $((2 * limited)) ] && break
        [ "$attempt" -lt 3 ] || fail "unlimited loop got $full ms, limited $limited ms: no difference in three tries"
    done
    pass "$limited ms of CPU at 10% against $full ms unlimited"
    ;;

cleanup)
    # The job sits in cmcp/job-<jail pid> in every hierarchy it needs; nothing is left after a
    # normal exit, nor after the supervisor stops the jail mid-job.
    need_cgroup
    policy '{}'
    jail_report 10 /usr/bin/cat /proc/self/cgroup
    expect_rc 0
    name=$(sed -n 's|^[0-9]*:[^:]*:/cmcp/\(job-[0-9][0-9]*\)$|\1|p' "$OUT" | head -1)
    [ -n "$name" ] || fail "the job is in no cmcp/job-<pid> cgroup"
    if mp=$(controller_mount memory) && writable_hierarchy "$mp"; then
        grep -Eq "^[0-9]+:([^:]*,)?memory(,[^:]*)?:/cmcp/$name\$|^0::/cmcp/$name\$" "$OUT" \
            || fail "the job is not in the memory cgroup cmcp/$name"
    fi
    if cgroup_mounts | grep -q ' cgroup2 '; then
        grep -qx "0::/cmcp/$name" "$OUT" || fail "the job is not in the v2 cgroup cmcp/$name"
    fi
    expect_no_cgroup_left "$name"

    policy "{\"name\":\"$NAME\"}"
    timeout -s TERM 1 "$JAIL" --policy-fd 9 -- /usr/bin/sh -c '/usr/bin/sleep 30 & /usr/bin/sleep 30' 9<<<"$POLICY" >"$OUT" 2>"$ERR"
    RC=$?
    [ "$RC" -eq 124 ] || fail "the jail was not stopped by SIGTERM (status $RC)"
    expect_all_dead
    expect_no_cgroup_left

    # Leftovers of a jail that died before cleaning up, under the name this job gets (default
    # names are pids, which are reused), go too: also in the jail's hierarchies this job does
    # not join (pids and cpu, without their limits).
    stale=0
    while read -r mp type options; do
        [ "$type" = cgroup2 ] || [[ ,$options, =~ ,(memory|pids|cpu|cpuacct), ]] || continue
        mkdir -p "$mp/cmcp" 2>/dev/null && mkdir "$mp/cmcp/$NAME" 2>/dev/null || continue
        CLEANUP_CGROUPS+=("$mp/cmcp/$NAME")
        stale=$((stale + 1))
    done < <(cgroup_mounts)
    policy "{\"name\":\"$NAME\"}"
    jail_report 10 /usr/bin/true
    expect_rc 0
    expect_no_cgroup_left
    pass "cmcp/$name removed after exit, cmcp/$NAME after SIGTERM and $stale stale leftovers of its name"
    ;;

kill-escapees)
    # setsid'd and double-forked processes leave the job's session and process group; the
    # cgroup still holds them, and they die when the job ends.
    need_cgroup
    escape='/usr/bin/setsid -f /usr/bin/sleep 30; /usr/bin/setsid -f /usr/bin/sh -c "while :; do /usr/bin/sleep 1; done"; /usr/bin/sleep 0.3; echo started'
    policy '{}' '["identity","rlimits"]'
    jail_report 10 /usr/bin/sh -c "$escape"
    sleep 0.2
    without=$(live_processes)
    kill_uid_processes
    policy "{\"name\":\"$NAME\"}"
    jail_report 10 /usr/bin/sh -c "$escape"
    expect_rc 0
    grep -q started "$OUT" || fail "the escapees were not started"
    expect_all_dead
    expect_no_cgroup_left
    pass "no escapee survived (without the cgroup layer $without did)"
    ;;

kill-escapees-v1)
    # The same on a legacy v1 host, without cgroup.kill: the v2 hierarchy unmounted in a
    # private mount namespace, the jail kills the tasks v1 lists until none is left, while one
    # escapee keeps forking.
    need_cgroup pids
    command -v unshare >/dev/null || skip "needs unshare(1) for a private mount namespace"
    unified=$(cgroup_mounts | awk '$2 == "cgroup2" { print $1; exit }')
    [ -n "$unified" ] || skip "no cgroup v2 hierarchy: kill-escapees already ran without cgroup.kill"
    [ "$(controller_mount pids)" != "$unified" ] || skip "pure cgroup v2 host: no v1 hierarchy to fall back to"
    policy "{\"pids\":64,\"name\":\"$NAME\"}"
    timeout -k 2 20 unshare -m --propagation private sh -c 'umount -l "$1" || exit 200; shift; exec "$@"' _ "$unified" \
        "$JAIL" --policy-fd 9 -- /usr/bin/sh -c '/usr/bin/setsid -f /usr/bin/sleep 30
            /usr/bin/setsid -f /usr/bin/sh -c "while :; do /usr/bin/true & done" 2>/dev/null
            /usr/bin/sleep 0.3; /usr/bin/cat /proc/self/cgroup' 9<<<"$POLICY" >"$OUT" 2>"$ERR"
    RC=$?
    [ "$RC" -ne 200 ] || skip "cannot unmount $unified in a mount namespace"
    expect_rc 0
    grep -q "^0::/cmcp/$NAME\$" "$OUT" && fail "the job still got a v2 cgroup: the v1 path was not exercised"
    grep -q "pids:/cmcp/$NAME\$" "$OUT" || fail "the job is not in the v1 pids cgroup cmcp/$NAME"
    expect_all_dead
    expect_no_cgroup_left
    pass
    ;;

fail-closed)
    # The memory hierarchy made read-only in a private mount namespace, as on a host where it
    # is not writable: a memory limit fails closed (94, before the job runs), and a policy
    # without limits still runs where other hierarchies remain.
    need_cgroup memory
    command -v unshare >/dev/null || skip "needs unshare(1) for a private mount namespace"
    mp=$(controller_mount memory)
    readonly_jail() {
        timeout -k 2 10 unshare -m --propagation private sh -c \
            'mount -o remount,bind,ro "$1" || exit 200; shift; exec "$@"' _ "$mp" \
            "$JAIL" --policy-fd 9 -- "$@" 9<<<"$POLICY" >"$OUT" 2>"$ERR"
        RC=$?
        [ "$RC" -ne 200 ] || skip "cannot remount $mp read-only in a mount namespace"
    }
    policy "{\"memory_bytes\":67108864,\"name\":\"$NAME\"}"
    readonly_jail /usr/bin/touch "$WS/ran"
    expect_rc 94 "cgroup"
    expect_err "cmcp-jail: cgroup: "
    [ ! -e "$WS/ran" ] || fail "the job ran without its memory limit"
    others=$(cgroup_mounts | awk -v mp="$mp" '$1 != mp && ($2 == "cgroup2" || $3 ~ /(^|,)(cpuacct|memory)(,|$)/)' | wc -l)
    if [ "$others" -gt 0 ]; then
        expect_err "memory_bytes: no writable memory cgroup controller"
        expect_no_cgroup_left # nothing of the refused job stays in the writable hierarchies
        policy "{\"name\":\"$NAME\"}"
        readonly_jail /usr/bin/touch "$WS/ran"
        expect_rc 0 "no limit asked for: the other hierarchies suffice"
        [ -e "$WS/ran" ] || fail "the job did not run"
    else
        expect_err "no writable cgroup hierarchy"
    fi
    expect_no_cgroup_left
    pass
    ;;

accounting)
    # cpu_ms covers the whole job tree: an orphaned busy loop (reparented away from the job, so
    # no rusage of a waited-for child holds its time) is counted from the cgroup.
    need_cgroup
    policy "{\"name\":\"$NAME\"}"
    # The orphan burns 400 ms of CPU time (not wall time: other tests may share the cores),
    # then leaves a marker the job waits for.
    jail_report 20 /usr/bin/sh -c '( /usr/bin/python3 -I -S -c "import time
t = time.process_time()
while time.process_time() - t < 0.4: pass
open(\"burnt\", \"w\").close()" & ); while [ ! -e burnt ]; do /usr/bin/sleep 0.05; done'
    expect_rc 0
    cpu=$(exit_number cpu_ms)
    peak=$(exit_number peak_memory_kb)
    [ "$cpu" -ge 380 ] || fail "cpu_ms $cpu: the orphan's 400 ms of CPU are not counted"
    [ "$peak" -gt 0 ] || fail "peak_memory_kb is 0"
    expect_exit_field oom_killed false
    pass "cpu_ms $cpu, peak_memory_kb $peak"
    ;;

no-escape)
    # The job cannot raise its limits, leave its cgroup, or make sub-cgroups: all root's.
    need_cgroup memory
    mp=$(controller_mount memory)
    limitfile=memory.max
    [ -e "$mp/memory.limit_in_bytes" ] && limitfile=memory.limit_in_bytes
    unified=$(cgroup_mounts | awk '$2 == "cgroup2" { print $1; exit }')
    policy "{\"memory_bytes\":67108864,\"name\":\"$NAME\"}"
    jail_report 10 /usr/bin/sh -c '
        echo 1073741824 >"$1/$2" && echo raised-limit
        echo $$ >"$3/cgroup.procs" && echo left-to-root
        echo $$ >"$3/cmcp/cgroup.procs" && echo left-to-parent
        [ -z "$4" ] || { echo $$ >"$4/cgroup.procs" && echo left-v2; }
        /usr/bin/mkdir "$1/sub" && echo made-subgroup
        echo "limit=$(/usr/bin/cat "$1/$2")"
        /usr/bin/cat /proc/self/cgroup' _ "$mp/cmcp/$NAME" "$limitfile" "$mp" "$unified"
    expect_rc 0
    for what in raised-limit left-to-root left-to-parent left-v2 made-subgroup; do
        grep -qx "$what" "$OUT" && fail "the job could do this: $what"
    done
    grep -qx "limit=67108864" "$OUT" || fail "the job's limit reads $(grep limit= "$OUT")"
    grep -q "/cmcp/$NAME\$" "$OUT" || fail "the job is no longer in cmcp/$NAME"
    expect_no_cgroup_left
    pass
    ;;

policy)
    # Refused before anything runs: needs no root. A name must not climb out of cmcp/.
    base="\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{}"
    cg="$base,\"layers\":[\"identity\",\"cgroup\"]"
    expect_policy_refused "{$cg,\"cgroup\":{\"name\":\"..\"}}" 'cgroup.name: 1-64 of'
    expect_policy_refused "{$cg,\"cgroup\":{\"name\":\"../../memory\"}}" 'cgroup.name: 1-64 of'
    expect_policy_refused "{$cg,\"cgroup\":{\"name\":\"\"}}" 'cgroup.name: 1-64 of'
    expect_policy_refused "{$cg,\"cgroup\":{\"memory_bytes\":4096}}" 'cgroup.memory_bytes: 4096 is outside'
    expect_policy_refused "{$cg,\"cgroup\":{\"pids\":0}}" 'cgroup.pids: 0 is outside'
    expect_policy_refused "{$cg,\"cgroup\":{\"cpu_percent\":0}}" 'cgroup.cpu_percent: 0 is outside'
    expect_policy_refused "{$cg,\"cgroup\":{\"swap\":1}}" 'cgroup.swap: unknown key'
    expect_policy_refused "{$base,\"layers\":[\"identity\"],\"cgroup\":{}}" 'cgroup: given but the "cgroup" layer is not requested'
    pass
    ;;

*)
    echo "unknown case: $CASE"
    exit 1
    ;;
esac
