# Shared by the security test scripts, sourced first: arguments, a scratch workspace, bounded
# jail runs, verdicts, and cleanup of everything the test uid left running.
#   <script> <path to cmcp-jail> <case> <test uid>
# Exit 0 pass, 1 fail, 77 skip (with the reason on stdout). Every wait is bounded with
# timeout(1); processes left by the test uid are killed, by pid, on exit.
set -u

JAIL=$1
CASE=$2
TUID=$3 # one host uid per case (see CMakeLists.txt), so cases can run in parallel
TGID=$TUID

TMPROOT=$(mktemp -d "${TMPDIR:-/tmp}/cmcp-security-test.XXXXXX")
chmod 755 "$TMPROOT"
WS=$TMPROOT/ws
mkdir "$WS"
OUT=$TMPROOT/out
ERR=$TMPROOT/err
RC=0
BGPIDS=()        # helpers a test starts outside the jail (listeners, victims)
CLEANUP_PATHS=() # scratch paths a test keeps outside $TMPROOT
CLEANUP_CGROUPS=() # cgroup directories a test makes (rmdir only: their files cannot be deleted)

kill_uid_processes() {
    # Only the test's own uid, one pid at a time.
    local pid
    for pid in $(pgrep -u "$TUID" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
}
cleanup() {
    local pid dir
    for pid in "${BGPIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    kill_uid_processes
    rm -rf "$TMPROOT" "${CLEANUP_PATHS[@]}"
    for dir in "${CLEANUP_CGROUPS[@]}"; do rmdir "$dir" 2>/dev/null; done
}
trap cleanup EXIT

fail() {
    echo "FAIL [$CASE]: $*"
    echo "--- stdout:"; cat "$OUT" 2>/dev/null
    echo "--- stderr:"; cat "$ERR" 2>/dev/null
    exit 1
}
pass() { echo "PASS [$CASE]${1:+: $1}"; exit 0; }
skip() { echo "SKIP [$CASE]: $*"; exit 77; }

need_root() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (the jail switches to host uid $TUID; CI runs as root)"
    chown "$TUID:$TGID" "$WS"
    kill_uid_processes
}

# jail SECONDS PROGRAM ARGS...: runs the jail with $POLICY on fd 9, bounded; status in $RC.
jail() {
    local secs=$1; shift
    timeout -k 2 "$secs" "$JAIL" --policy-fd 9 -- "$@" 9<<<"$POLICY" >"$OUT" 2>"$ERR"
    RC=$?
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1${2:+ ($2)}"; }
expect_err() { grep -qF -- "$1" "$ERR" || fail "stderr does not contain: $1"; }

# expect_policy_refused POLICY MESSAGE: the jail refuses POLICY with the policy status and one
# stderr line naming MESSAGE, and the job (which would leave a marker) never runs.
expect_policy_refused() {
    POLICY=$1
    local marker=$TMPROOT/refused-marker
    chmod 1777 "$TMPROOT"
    jail 10 /usr/bin/touch "$marker"
    expect_rc 91 "policy: $2"
    [ "$(wc -l <"$ERR")" -eq 1 ] || fail "more than one line on stderr"
    expect_err "cmcp-jail: policy: $2"
    [ ! -e "$marker" ] || fail "the job ran with a refused policy"
}
