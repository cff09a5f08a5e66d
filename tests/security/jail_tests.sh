#!/usr/bin/env bash
# Security tests for cmcp-jail: bash drives the built jail with a policy and a /usr/bin program
# and asserts containment from the outside.
#   jail_tests.sh <path to cmcp-jail> <case> <test uid>
# Exit 0 pass, 1 fail, 77 skip (with the reason on stdout). Every wait is bounded with
# timeout(1); processes left by the test uid are killed, by pid, on exit.
source "$(dirname "$0")/lib.sh"

# policy [limits-json] [layers-json] [env-json] [extra-json-members]
policy() {
    local limits=${1:-'{}'} layers=${2:-'["identity","rlimits"]'}
    local env=${3:-'{"PATH":"/usr/bin:/bin","LANG":"C"}'} extra=${4:-}
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":$env,\"limits\":$limits,\"layers\":$layers$extra}"
}

status_field() { sed -n "s/^$1:[[:space:]]*//p" "$OUT"; }

case "$CASE" in

identity)
    need_root
    # Non-vacuous: the jail is started with supplementary groups and as root.
    setpriv --groups 4,42 -- id -G | grep -qw 4 || fail "precondition: setpriv --groups did not add groups"
    policy
    timeout -k 2 10 setpriv --groups 4,42 -- "$JAIL" --policy-fd 9 -- /usr/bin/id 9<<<"$POLICY" >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    [ "$(cat "$OUT")" = "uid=$TUID gid=$TGID groups=$TGID" ] || fail "id output is not uid/gid $TUID with no other group"
    # Started unprivileged as another uid: cannot become the policy uid, fails closed.
    policy
    timeout -k 2 10 setpriv --reuid 100399 --regid 100399 --clear-groups -- \
        "$JAIL" --policy-fd 9 -- /usr/bin/touch "$WS/ran" 9<<<"$POLICY" >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 92 "identity"
    expect_err "cmcp-jail: identity: "
    [ ! -e "$WS/ran" ] || fail "the job ran although identity failed"
    pass
    ;;

unprivileged-groups)
    # A jail that is not root (the container's daemon user) maps only its own uid into the job's
    # user namespace, where setgroups is denied: it cannot drop supplementary groups there. With
    # only its own gid the job runs (as 1000 inside, no capability); with another group, here
    # root's group 0, which would still open group-0 files on the host, it fails closed.
    need_root
    policy '{}' '["identity","rlimits","namespaces"]' '{"PATH":"/usr/bin:/bin","LANG":"C"}' ',"namespaces":{}'
    as_test_uid() {
        timeout -k 2 10 setpriv --reuid "$TUID" --regid "$TGID" --groups "$1" -- \
            "$JAIL" --policy-fd 9 -- /usr/bin/sh -c 'id -u; grep -E "^(CapEff|CapBnd)" /proc/self/status; touch /workspace/ran' \
            9<<<"$POLICY" >"$OUT" 2>"$ERR"
        RC=$?
    }
    as_test_uid "$TGID"
    expect_rc 0 "own gid only"
    [ "$(head -n 1 "$OUT")" = 1000 ] || fail "the job is not uid 1000 inside"
    [ "$(grep -c ':[[:space:]]*0000000000000000$' "$OUT")" = 2 ] || fail "the job kept capabilities"
    [ -e "$WS/ran" ] || fail "the job did not run"
    rm -f "$WS/ran"
    as_test_uid "$TGID,0"
    expect_rc 92 "identity: group 0 cannot be dropped"
    expect_err "cmcp-jail: identity: setgroups(0)"
    [ ! -e "$WS/ran" ] || fail "the job ran with group 0"
    pass
    ;;

status)
    need_root
    policy
    jail 10 /usr/bin/cat /proc/self/status
    expect_rc 0
    for f in CapInh CapPrm CapEff CapBnd CapAmb; do
        [ "$(status_field $f)" = 0000000000000000 ] || fail "$f is $(status_field $f), not zero"
    done
    [ "$(status_field NoNewPrivs)" = 1 ] || fail "NoNewPrivs is not 1"
    [ "$(status_field Uid | tr -s '\t ' ' ')" = "$TUID $TUID $TUID $TUID" ] || fail "Uid line: $(status_field Uid)"
    [ "$(status_field Gid | tr -s '\t ' ' ')" = "$TGID $TGID $TGID $TGID" ] || fail "Gid line: $(status_field Gid)"
    [ -z "$(status_field Groups | tr -d ' \t')" ] || fail "supplementary groups: $(status_field Groups)"
    pass
    ;;

env)
    need_root
    export CMCP_JAIL_TEST_SECRET="hunter2-$$"
    env | grep -q CMCP_JAIL_TEST_SECRET || fail "precondition: the secret is not in the test's environment"
    policy '{}' '["identity","rlimits"]' '{"PATH":"/usr/bin:/bin","LANG":"C","FOO":"bar baz=qux"}'
    jail 10 /usr/bin/env
    expect_rc 0
    grep -q "hunter2" "$OUT" && fail "the secret leaked into the job's environment"
    expected=$(printf 'FOO=bar baz=qux\nLANG=C\nPATH=/usr/bin:/bin\n' | sort)
    [ "$(sort "$OUT")" = "$expected" ] || fail "environment is not exactly the policy's"
    pass
    ;;

fds)
    need_root
    # Opened by the test without close-on-exec; visible to an unjailed child (non-vacuous).
    exec 7</etc/passwd
    exec 8>"$TMPROOT/leak"
    ls /proc/self/fd | grep -qx 7 || fail "precondition: fd 7 is not inherited by a plain child"
    policy
    jail 10 /usr/bin/ls -1 /proc/self/fd
    expect_rc 0
    # 0-2 and ls's own directory descriptor (3); nothing else: not 7, 8, nor the policy fd 9.
    [ "$(sort -n "$OUT" | tr '\n' ' ')" = "0 1 2 3 " ] || fail "descriptors in the job: $(tr '\n' ' ' <"$OUT")"
    pass
    ;;

pass-fd)
    # --pass-fd hands exactly one descriptor to the job, at its number; the others still close,
    # and the reader sees end-of-file once the job is gone (the monitor keeps no copy).
    need_root
    exec 7</etc/passwd
    policy
    timeout -k 2 10 "$JAIL" --policy-fd 9 --pass-fd 8 -- /usr/bin/sh -c 'ls -1 /proc/self/fd | tr "\n" " " >&2; echo via-8 >&8' \
        9<<<"$POLICY" 8>"$TMPROOT/passed" >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    [ "$(cat "$TMPROOT/passed")" = via-8 ] || fail "nothing arrived on the passed descriptor"
    grep -qw 7 "$ERR" && fail "descriptor 7 leaked into the job: $(cat "$ERR")"
    grep -qw 8 "$ERR" || fail "descriptor 8 is not open in the job: $(cat "$ERR")"
    timeout 10 "$JAIL" --policy-fd 9 --pass-fd 9 -- /usr/bin/true 9<<<"$POLICY" >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 90 "--pass-fd equal to --policy-fd"; expect_err "--pass-fd must differ"
    pass
    ;;

session)
    need_root
    policy
    jail 10 /usr/bin/cat /proc/self/stat
    expect_rc 0
    read -r pid _comm _state _ppid pgrp sid _rest <"$OUT"
    [ "$sid" = "$pid" ] && [ "$pgrp" = "$pid" ] || fail "job is not a session leader (pid $pid pgrp $pgrp sid $sid)"
    pass
    ;;

pdeathsig)
    need_root
    policy
    # An intermediate parent starts the jail, then dies: the jail's monitor and the job must
    # die with it. The job's host pid comes from the monitor's "started" record.
    bash -c '"$1" --policy-fd 9 --report-fd 5 -- /usr/bin/sleep 30 9<<<"$2" 5>"$3" & wait' _ \
        "$JAIL" "$POLICY" "$TMPROOT/report" >"$OUT" 2>"$ERR" &
    parent=$!
    for _ in $(seq 50); do grep -q started "$TMPROOT/report" 2>/dev/null && break; sleep 0.1; done
    job=$(sed -n 's/.*"event":"started".*"pid":\([0-9]*\).*/\1/p' "$TMPROOT/report")
    [ -n "$job" ] || { kill -KILL $parent; fail "the jail did not start: $(cat "$TMPROOT/report")"; }
    for _ in $(seq 50); do [ "$(stat -c %u /proc/$job 2>/dev/null)" = "$TUID" ] && break; sleep 0.1; done
    [ "$(stat -c %u /proc/$job 2>/dev/null)" = "$TUID" ] || { kill -KILL $parent; fail "job $job never ran as $TUID"; }
    kill -KILL $parent
    wait $parent 2>/dev/null
    # Dead means gone or a zombie waiting for the reaper (state Z in /proc/PID/stat).
    alive() { local st; st=$(cat /proc/$job/stat 2>/dev/null) || return 1; st=${st##*) }; [ "${st%% *}" != Z ]; }
    for _ in $(seq 30); do alive || break; sleep 0.1; done
    alive && fail "job $job survived its parent by 3 s"
    pass
    ;;

forkbomb)
    need_root
    policy '{"processes":16}'
    jail 20 /usr/bin/sh -c 'i=0; while [ $i -lt 200 ]; do /usr/bin/sleep 6 & i=$((i+1)); done; echo spawned-all'
    # Count while the sleeps are still alive.
    n=$(pgrep -u "$TUID" | wc -l)
    grep -q spawned-all "$OUT" && fail "all 200 background processes were spawned"
    grep -Eqi 'fork|resource temporarily unavailable' "$ERR" || fail "no fork failure reported"
    [ "$n" -le 16 ] || fail "$n processes of uid $TUID alive, limit 16"
    [ "$n" -ge 8 ] || fail "only $n processes alive: the bomb did not really run"
    pass "stopped at $n live processes (limit 16)"
    ;;

filesize)
    need_root
    policy '{"file_size_bytes":1048576}'
    jail 20 /usr/bin/sh -c 'cd "$0" && /usr/bin/head -c 10M /dev/zero > f; echo "rc=$?"' "$WS"
    expect_rc 0
    size=$(stat -c %s "$WS/f" 2>/dev/null || echo missing)
    [ "$size" != missing ] || fail "the file was not created at all"
    [ "$size" -le 1048576 ] || fail "file grew to $size bytes, limit 1048576"
    [ "$size" -gt 0 ] || fail "nothing was written: the bomb did not really run"
    grep -q '^rc=153$' "$OUT" || grep -qi 'file too large' "$ERR" || fail "head was neither killed by SIGXFSZ nor saw EFBIG"
    pass "stopped at $size bytes"
    ;;

cpu)
    need_root
    policy '{"cpu_seconds":1}'
    start=$(date +%s%N)
    jail 10 /usr/bin/sh -c 'while :; do :; done'
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "$ms" -lt 6000 ] || fail "busy loop ran ${ms} ms (timeout had to stop it)"
    [ "$RC" -eq 152 ] || [ "$RC" -eq 137 ] || fail "exit status $RC, expected SIGXCPU (152) or SIGKILL (137)"
    pass "killed after ${ms} ms with status $RC"
    ;;

shadow)
    need_root
    mkdir "$TMPROOT/rootdir"
    chmod 755 "$TMPROOT/rootdir"
    echo topsecret >"$TMPROOT/rootdir/secret"
    chmod 600 "$TMPROOT/rootdir/secret"
    policy
    jail 10 /usr/bin/cat "$TMPROOT/rootdir/secret"
    [ "$RC" -ne 0 ] || fail "reading a root-only file succeeded"
    grep -q topsecret "$OUT" && fail "root-only content leaked"
    expect_err "Permission denied"
    if [ -e /etc/shadow ] && [ "$(( 0$(stat -c %a /etc/shadow) & 4 ))" -eq 0 ]; then
        jail 10 /usr/bin/cat /etc/shadow
        [ "$RC" -ne 0 ] && [ ! -s "$OUT" ] || fail "reading /etc/shadow succeeded"
        expect_err "Permission denied"
    fi
    jail 10 /usr/bin/touch "$TMPROOT/rootdir/planted"
    [ "$RC" -ne 0 ] && [ ! -e "$TMPROOT/rootdir/planted" ] || fail "writing into a root-owned directory succeeded"
    pass
    ;;

policy-malformed)
    # Refused before any layer runs: needs no root. The program would leave a marker if it ran.
    mark=$TMPROOT/marker
    chmod 1777 "$TMPROOT"
    good="\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{}"
    expect_policy_refused '{"uid": 100200,'                                         'not valid JSON'
    expect_policy_refused ''                                                        'not valid JSON'
    expect_policy_refused '[1,2]'                                                   'the policy must be a JSON object'
    expect_policy_refused "{$good,\"layers\":[\"identity\"],\"bogus\":1}"           'bogus: unknown key'
    expect_policy_refused "{\"uid\":0,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{},\"layers\":[\"identity\"]}" 'uid: 0 is outside'
    expect_policy_refused "{\"uid\":999,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{},\"layers\":[\"identity\"]}" 'uid: 999 is outside'
    expect_policy_refused "{\"uid\":$TUID,\"gid\":0,\"workspace\":\"$WS\",\"env\":{},\"layers\":[\"identity\"]}" 'gid: 0 is outside'
    expect_policy_refused "{\"uid\":-5,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{},\"layers\":[\"identity\"]}" 'uid: must be a non-negative integer'
    expect_policy_refused "{\"uid\":\"$TUID\",\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{},\"layers\":[\"identity\"]}" 'uid: must be a non-negative integer'
    expect_policy_refused "{\"uid\":1.5e5,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{},\"layers\":[\"identity\"]}" 'uid: must be a non-negative integer'
    expect_policy_refused "{\"uid\":$TUID,\"uid\":0,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{},\"layers\":[\"identity\"]}" 'uid: duplicate key'
    expect_policy_refused "{\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{},\"layers\":[\"identity\"]}" 'uid: missing'
    expect_policy_refused "{$good,\"layers\":[\"identity\",\"teleport\"]}"           'layers: unknown layer "teleport"'
    expect_policy_refused "{$good,\"layers\":[\"identity\",\"identity\"]}"           'layers: "identity" listed twice'
    expect_policy_refused "{$good,\"layers\":[\"rlimits\"]}"                         'layers: "identity" is mandatory'
    expect_policy_refused "{$good,\"layers\":\"identity\"}"                          'layers: must be an array'
    expect_policy_refused "{$good,\"layers\":[\"identity\",\"rlimits\"],\"limits\":{\"memory\":1}}" 'limits.memory: unknown key'
    expect_policy_refused "{$good,\"layers\":[\"identity\",\"rlimits\"],\"limits\":{\"cpu_seconds\":-1}}" 'limits.cpu_seconds: must be'
    expect_policy_refused "{$good,\"layers\":[\"identity\",\"rlimits\"],\"limits\":{\"processes\":0}}" 'limits.processes: 0 is outside'
    expect_policy_refused "{$good,\"layers\":[\"identity\"],\"limits\":{\"processes\":5}}" 'limits: given but the "rlimits" layer is not requested'
    expect_policy_refused "{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"X\":1},\"layers\":[\"identity\"]}" 'env.X: must be a string'
    expect_policy_refused "{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"A=B\":\"c\"},\"layers\":[\"identity\"]}" 'env.A=B: invalid variable name'
    expect_policy_refused "{$good,\"layers\":[\"identity\"],\"cwd\":\"../..\"}"      'cwd: "../.." must be a relative path'
    expect_policy_refused "{$good,\"layers\":[\"identity\"],\"cwd\":\"/etc\"}"       'cwd: "/etc" must be a relative path'
    expect_policy_refused "{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"rel/ws\",\"env\":{},\"layers\":[\"identity\"]}" 'workspace: "rel/ws" must be an absolute path'
    expect_policy_refused "{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS/../..\",\"env\":{},\"layers\":[\"identity\"]}" "workspace: \"$WS/../..\" must be an absolute path"
    # Command line errors: status 90.
    timeout 10 "$JAIL" --policy-fd 9 9<<<"{}" >"$OUT" 2>"$ERR"; RC=$?
    expect_rc 90 "no program"; expect_err "cmcp-jail: usage: no program after --"
    timeout 10 "$JAIL" --policy "$TMPROOT/nope.json" -- /usr/bin/touch "$mark" >"$OUT" 2>"$ERR"; RC=$?
    expect_rc 91 "missing file"; expect_err "No such file or directory"
    timeout 10 "$JAIL" --bogus 1 -- /usr/bin/touch "$mark" >"$OUT" 2>"$ERR"; RC=$?
    expect_rc 90 "unknown option"; expect_err "--bogus: unknown option"
    [ ! -e "$mark" ] || fail "the job ran after a usage error"
    pass
    ;;

fail-closed)
    # A layer the machine cannot apply is refused with its own status, never skipped. AppArmor
    # is the one layer that can be missing where these tests run: without it (or without the
    # profile loaded) the job must not run.
    need_root
    mark=$TMPROOT/marker
    chmod 1777 "$TMPROOT"
    POLICY=$(printf '{"uid":%d,"gid":%d,"workspace":"%s","env":{},"layers":["identity","apparmor"],"apparmor":{"profile":"cmcp-test-no-such-profile"}}' "$TUID" "$TGID" "$WS")
    jail 10 /usr/bin/touch "$mark"
    expect_rc 98 "apparmor"
    expect_err "cmcp-jail: apparmor: "
    [ ! -e "$mark" ] || fail "the job ran although AppArmor could not be applied"
    pass
    ;;

rlimit-above-hard)
    mark=$TMPROOT/marker
    chmod 1777 "$TMPROOT"
    policy '{"open_files":2000000000}'
    jail 10 /usr/bin/touch "$mark"
    expect_rc 93 "rlimits"
    expect_err "cmcp-jail: rlimits: setrlimit RLIMIT_NOFILE"
    [ ! -e "$mark" ] || fail "the job ran although a limit could not be set"
    pass
    ;;

exec-errors)
    need_root
    policy
    jail 10 no-such-program-xyz
    expect_rc 99 "unknown program"; expect_err "cmcp-jail: exec: no-such-program-xyz: not found along the policy's PATH"
    jail 10 id   # found along the policy's PATH
    expect_rc 0
    grep -q "uid=$TUID" "$OUT" || fail "id via PATH did not run as $TUID"
    printf '#!/bin/sh\necho hi\n' >"$WS/noexec"; chmod 644 "$WS/noexec"
    jail 10 "$WS/noexec"
    expect_rc 99 "not executable"; expect_err "cmcp-jail: exec: execve $WS/noexec: Permission denied"
    POLICY=${POLICY/\"workspace\":\"$WS\"/\"workspace\":\"$WS-missing\"}
    jail 10 /usr/bin/true
    expect_rc 99 "missing workspace"; expect_err "cmcp-jail: exec: workspace $WS-missing"
    # --report-fd: a "refused" record on failure; "started" and "exit" records on success,
    # and the descriptor is never the job's.
    timeout 10 "$JAIL" --policy-fd 9 --report-fd 5 -- /usr/bin/true 9<<<"$POLICY" 5>"$TMPROOT/report" >"$OUT" 2>"$ERR"
    grep -qF '"code":99,"event":"refused","layer":"exec","message":"cmcp-jail: exec: workspace '"$WS"'-missing: No such file or directory"' "$TMPROOT/report" || fail "report fd: $(cat "$TMPROOT/report")"
    [ "$(wc -l <"$TMPROOT/report")" -eq 1 ] || fail "more than the refused record: $(cat "$TMPROOT/report")"
    policy
    timeout 10 "$JAIL" --policy-fd 9 --report-fd 5 -- /usr/bin/ls -1 /proc/self/fd 9<<<"$POLICY" 5>"$TMPROOT/report" >"$OUT" 2>"$ERR"
    RC=$?; expect_rc 0
    grep -q '"event":"started".*"layers":\["identity","rlimits"\]' "$TMPROOT/report" || fail "no started record: $(cat "$TMPROOT/report")"
    grep -q '"event":"exit","exit_code":0,' "$TMPROOT/report" || fail "no exit record: $(cat "$TMPROOT/report")"
    grep -qx 5 "$OUT" && fail "the report fd is visible to the job"
    pass
    ;;

cwd-beneath)
    need_root
    mkdir -p "$WS/sub/dir"
    ln -s /etc "$WS/esc"
    ln -s ../.. "$WS/sub/up"
    chown -R "$TUID:$TGID" "$WS"
    policy '{}' '["identity","rlimits"]' '{"PATH":"/usr/bin:/bin"}' ',"cwd":"sub/dir"'
    jail 10 /usr/bin/pwd -P
    expect_rc 0
    [ "$(cat "$OUT")" = "$WS/sub/dir" ] || fail "cwd is $(cat "$OUT"), expected $WS/sub/dir"
    for bad in esc sub/up; do
        policy '{}' '["identity","rlimits"]' '{"PATH":"/usr/bin:/bin"}' ",\"cwd\":\"$bad\""
        jail 10 /usr/bin/pwd -P
        expect_rc 99 "cwd $bad escapes the workspace"
        expect_err "cmcp-jail: exec: cwd $bad beneath the workspace"
    done
    pass
    ;;

*)
    echo "unknown case $CASE"; exit 1 ;;
esac
