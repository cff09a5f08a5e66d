#!/usr/bin/env bash
# Security tests for cmcp-jail's Landlock layer: attacks from inside a jail with
# identity + rlimits + landlock, each one first shown to succeed WITHOUT the landlock layer
# (same command, layers identity + rlimits only), so that no case passes vacuously.
#   landlock_tests.sh <path to cmcp-jail> <case> <test uid>
# Exit 0 pass, 1 fail, 77 skip (with the reason on stdout). Every wait is bounded with
# timeout(1); processes left by the test uid and the test's own listener are killed by pid.
source "$(dirname "$0")/lib.sh"
OUTSIDE=$(mktemp -d "${TMPDIR:-/tmp}/outside-XXXXXX") # not beneath the workspace, not in any read list
chmod 755 "$OUTSIDE"
CLEANUP_PATHS+=("$OUTSIDE")

# The kernel's Landlock ABI (landlock_create_ruleset(NULL, 0, VERSION)), or a negative errno.
landlock_abi() {
    python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
print(r if r >= 0 else -ctypes.get_errno())'
}
need_landlock() {
    ABI=$(landlock_abi)
    [ -n "$ABI" ] && [ "$ABI" -gt 0 ] || skip "Landlock is not available in this kernel (landlock_create_ruleset: errno ${ABI#-})"
}
need_abi() {
    [ "$ABI" -ge "$1" ] || skip "needs Landlock ABI $1 for $2; the kernel has ABI $ABI"
}

LDSO=$(readlink -f /lib64/ld-linux-x86-64.so.2 2>/dev/null || true)
READ='"/usr","/etc","/lib","/lib64","/bin","/sbin","/dev/null","/proc"'
PY=$(readlink -f /usr/bin/python3)
EXEC="\"$PY\",\"/usr/bin/cat\",\"/usr/bin/id\",\"/usr/bin/touch\",\"/usr/bin/bash\",\"/usr/bin/dash\",\"$LDSO\""

# policy_plain: identity + rlimits only. policy_ll [landlock-json]: the same plus landlock.
policy_plain() {
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/usr/bin:/bin\",\"LANG\":\"C\"},\"limits\":{},\"layers\":[\"identity\",\"rlimits\"]}"
}
policy_ll() {
    local ll=${1:-"{\"read\":[$READ],\"execute\":[$EXEC],\"network\":false}"}
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/usr/bin:/bin\",\"LANG\":\"C\"},\"limits\":{},\"layers\":[\"identity\",\"rlimits\",\"landlock\"],\"landlock\":$ll}"
}

# jail SECONDS PROGRAM ARGS...: runs the jail with $POLICY on fd 9, bounded.
# both WHAT PROGRAM ARGS...: must succeed without landlock (non-vacuous), then is run with it.
both() {
    local what=$1; shift
    policy_plain
    jail 10 "$@"
    [ "$RC" -eq 0 ] || fail "precondition: without Landlock, $what did not work (status $RC)"
    policy_ll
    jail 10 "$@"
}

expect_fail() { [ "$RC" -ne 0 ] || fail "$1 succeeded under Landlock"; }

case "$CASE" in

read-outside)
    need_root; need_landlock
    echo "top secret" >"$OUTSIDE/secret"
    chmod 644 "$OUTSIDE/secret"
    both "reading $OUTSIDE/secret" /usr/bin/cat "$OUTSIDE/secret"
    expect_fail "reading a file outside the read list"
    expect_err "$OUTSIDE/secret: Permission denied"
    grep -q "top secret" "$OUT" && fail "the secret was read"
    # The read list itself works: /etc/passwd is readable, and the workspace too.
    echo hello >"$WS/mine"; chown "$TUID:$TGID" "$WS/mine"
    jail 10 /usr/bin/cat /etc/hostname "$WS/mine"
    expect_rc 0 "reading /etc and the workspace"
    grep -qx hello "$OUT" || fail "workspace file not read back"
    pass
    ;;

write-outside)
    need_root; need_landlock
    chmod 777 "$OUTSIDE"
    # (Removed between the runs: touch on an existing own file falls back to utimensat, which
    # Landlock does not restrict.)
    policy_plain
    jail 10 /usr/bin/touch "$OUTSIDE/made"
    expect_rc 0 "precondition: without Landlock, creating a file in the 0777 $OUTSIDE"
    rm -f "$OUTSIDE/made"
    policy_ll
    jail 10 /usr/bin/touch "$OUTSIDE/made"
    expect_fail "creating a file outside the workspace"
    expect_err "Permission denied"
    [ ! -e "$OUTSIDE/made" ] || fail "a file was created outside the workspace"
    # Appending to an existing world-writable file outside is refused too.
    echo keep >"$OUTSIDE/ww"; chmod 666 "$OUTSIDE/ww"
    both "appending to the 0666 $OUTSIDE/ww" /usr/bin/bash -c "echo x >>$OUTSIDE/ww"
    expect_fail "writing a file outside the workspace"
    [ "$(cat "$OUTSIDE/ww")" = "$(printf 'keep\nx')" ] || fail "the outside file was modified under Landlock"
    # Inside the workspace: create, write, make a directory, rename.
    policy_ll "{\"read\":[$READ],\"execute\":[$EXEC,\"/usr/bin/mkdir\",\"/usr/bin/mv\"]}"
    jail 10 /usr/bin/bash -c "echo data >$WS/f && mkdir $WS/d && echo y >$WS/d/g && mv $WS/d/g $WS/h && cat $WS/h"
    expect_rc 0 "writing inside the workspace"
    [ "$(cat "$WS/f")" = data ] && [ -e "$WS/h" ] || fail "workspace writes are missing"
    pass
    ;;

exec-allowlist)
    need_root; need_landlock
    [ -n "$LDSO" ] || skip "no /lib64/ld-linux-x86-64.so.2 on this machine"
    policy_ll
    jail 10 /usr/bin/cat /etc/hostname
    expect_rc 0 "cat is in the execute list"
    jail 10 id
    expect_rc 0 "id via PATH is in the execute list"
    both "running /usr/bin/ls" /usr/bin/ls /
    expect_rc 99 "ls is not in the execute list"
    expect_err "cmcp-jail: exec: execve /usr/bin/ls: Permission denied"
    both "running ls via PATH" ls /
    expect_rc 99 "ls via PATH"
    both "sh -c ls" /bin/sh -c ls
    expect_rc 126 "the shell runs, ls is refused"
    expect_err "Permission denied"
    both "sh -c /usr/bin/ls" /bin/sh -c /usr/bin/ls
    expect_rc 126 "the shell runs, /usr/bin/ls is refused"
    # A copy of an allowed-nowhere program into the (writable) workspace cannot be run.
    cp /usr/bin/ls "$WS/myls"; chown "$TUID:$TGID" "$WS/myls"; chmod 755 "$WS/myls"
    both "running a program copied into the workspace" "$WS/myls" /
    expect_rc 99 "workspace programs are not executable"
    # Known gap, not tested as contained: "$LDSO /usr/bin/ls" runs ls, since ld.so (which must
    # be executable) maps the program with only read access. See policy.h.
    pass
    ;;

tcp-connect)
    need_root; need_landlock; need_abi 4 "TCP bind/connect rights"
    python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$TMPROOT/port" &
    BGPIDS+=($!)
    for _ in $(seq 50); do [ -s "$TMPROOT/port" ] && break; sleep 0.1; done
    port=$(cat "$TMPROOT/port")
    [ -n "$port" ] || fail "precondition: the loopback listener did not start"
    both "connecting to 127.0.0.1:$port" /usr/bin/bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
    expect_fail "a TCP connect to the loopback listener"
    expect_err "Permission denied"
    # network true leaves TCP alone.
    policy_ll "{\"read\":[$READ],\"execute\":[$EXEC],\"network\":true}"
    jail 10 /usr/bin/bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
    expect_rc 0 "network true"
    pass
    ;;

signal-scope)
    need_root; need_landlock; need_abi 6 "signal scoping"
    # A process of the SAME uid, outside the job's Landlock domain.
    setpriv --reuid "$TUID" --regid "$TGID" --clear-groups -- sleep 60 &
    victim=$!
    BGPIDS+=($victim)
    sleep 0.2
    [ "$(stat -c %u /proc/$victim)" = "$TUID" ] || fail "precondition: the victim does not run as $TUID"
    both "signalling pid $victim (same uid)" /usr/bin/bash -c "kill -0 $victim"
    expect_fail "signalling a same-uid process outside the domain"
    expect_err "Operation not permitted"
    policy_ll
    jail 10 /usr/bin/bash -c "kill -KILL $victim"
    expect_fail "killing a same-uid process outside the domain"
    kill -0 "$victim" 2>/dev/null || fail "the victim was killed from inside the jail"
    # Within the domain, signals work: the job can kill its own child.
    jail 10 /usr/bin/bash -c '( while :; do :; done ) & kill -TERM $!; wait $!; [ $? -eq 143 ]'
    expect_rc 0 "signalling the job's own child"
    # Non-vacuous for the real signal, too: without Landlock the kill lands.
    policy_plain
    jail 10 /usr/bin/bash -c "kill -KILL $victim"
    expect_rc 0 "killing the victim without Landlock"
    pass
    ;;

symlink-escape)
    need_root; need_landlock
    echo "top secret" >"$OUTSIDE/secret"; chmod 644 "$OUTSIDE/secret"; chmod 777 "$OUTSIDE"
    ln -s "$OUTSIDE/secret" "$WS/link"
    ln -s "$OUTSIDE" "$WS/dirlink"
    # Up to / (one .. for each component of $WS, wherever TMPDIR puts it), then down to $OUTSIDE.
    ln -s "$(sed 's|/[^/]*|../|g' <<<"$WS")${OUTSIDE#/}" "$WS/rellink"
    chown -h "$TUID:$TGID" "$WS/link" "$WS/dirlink" "$WS/rellink"
    for l in link rellink/secret dirlink/secret; do
        both "reading $WS/$l" /usr/bin/cat "$WS/$l"
        expect_fail "reading through the symlink $l"
        grep -q "top secret" "$OUT" && fail "the secret was read through $l"
    done
    policy_plain
    jail 10 /usr/bin/touch "$WS/dirlink/made"
    expect_rc 0 "precondition: without Landlock, creating a file through $WS/dirlink"
    rm -f "$OUTSIDE/made"
    policy_ll
    jail 10 /usr/bin/touch "$WS/dirlink/made"
    expect_fail "creating a file through the directory symlink"
    [ ! -e "$OUTSIDE/made" ] || fail "a file was created through the directory symlink"
    pass
    ;;

abstract-unix)
    need_root; need_landlock; need_abi 6 "abstract Unix socket scoping"
    name="cmcp-ll-test-$$-$RANDOM"
    python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[1]); s.listen(64)
print("up", flush=True); time.sleep(60)' "$name" >"$TMPROOT/up" &
    BGPIDS+=($!)
    for _ in $(seq 50); do [ -s "$TMPROOT/up" ] && break; sleep 0.1; done
    [ -s "$TMPROOT/up" ] || fail "precondition: the abstract socket listener did not start"
    both "connecting to @$name" /usr/bin/python3 -I -S -c 'import socket, sys
socket.socket(socket.AF_UNIX).connect("\0" + sys.argv[1])' "$name"
    expect_fail "connecting to an abstract Unix socket outside the domain"
    expect_err "PermissionError"
    pass
    ;;

status)
    need_root; need_landlock
    policy_ll
    jail 10 /usr/bin/cat /proc/self/status
    expect_rc 0
    grep -qP '^NoNewPrivs:\s*1$' "$OUT" || fail "NoNewPrivs is not 1"
    grep -qP '^Uid:\s*'"$TUID"'\s' "$OUT" || fail "not running as $TUID"
    pass
    ;;

policy-malformed)
    # Refused before any layer runs: needs no root.
    base="\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{}"
    ll="\"layers\":[\"identity\",\"landlock\"]"
    expect_policy_refused "{$base,$ll}"                                            'landlock: missing (the "landlock" layer is requested)'
    expect_policy_refused "{$base,\"layers\":[\"identity\"],\"landlock\":{}}"      'landlock: given but the "landlock" layer is not requested'
    expect_policy_refused "{$base,$ll,\"landlock\":[]}"                            'landlock: must be an object'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"bogus\":[]}}"                'landlock.bogus: unknown key'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"read\":\"/usr\"}}"           'landlock.read: must be an array of absolute paths'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"read\":[1]}}"                'landlock.read: must be an array of absolute paths'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"read\":[\"usr\"]}}"          'landlock.read: "usr" must be an absolute path'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"read\":[\"\"]}}"             'landlock.read: "" must be an absolute path'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"write\":[\"/tmp/../etc\"]}}" 'landlock.write: "/tmp/../etc" must be an absolute path'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"execute\":[\"/usr/./bin\"]}}" 'landlock.execute: "/usr/./bin" must be an absolute path'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"read\":[\"/usr/\"]}}"        'landlock.read: "/usr/" must be an absolute path'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"network\":0}}"               'landlock.network: must be true or false'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"network\":false,\"network\":true}}" 'network: duplicate key'
    expect_policy_refused "{$base,$ll,\"landlock\":{\"execute\":[\"$WS/bin\"]}}"   "landlock.execute: \"$WS/bin\" overlaps the writable \"$WS\""
    expect_policy_refused "{$base,$ll,\"landlock\":{\"execute\":[\"/\"]}}"         "landlock.execute: \"/\" overlaps the writable \"$WS\""
    expect_policy_refused "{$base,$ll,\"landlock\":{\"write\":[\"/usr/local\"],\"execute\":[\"/usr\"]}}" 'landlock.execute: "/usr" overlaps the writable "/usr/local"'
    pass
    ;;

*)
    echo "unknown case $CASE"; exit 1 ;;
esac
