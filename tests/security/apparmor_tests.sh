#!/usr/bin/env bash
# Security tests for the jail's AppArmor layer: the job execs under the policy's profile.
#   apparmor_tests.sh <path to cmcp-jail> <case> <test uid>
# Skips, with the reason, where the kernel has no AppArmor (the jail then refuses the layer:
# see jail_tests.sh fail-closed) or apparmor_parser is missing. The syntax-* cases check the
# shipped profiles (apparmor/) and need no kernel support.
source "$(dirname "$0")/lib.sh"
PROFILES_DIR=$(cd "$(dirname "$0")/../../apparmor" && pwd)

need_apparmor() {
    need_root
    [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] \
        || skip "AppArmor is not enabled in this kernel (/sys/module/apparmor/parameters/enabled)"
    command -v apparmor_parser >/dev/null || skip "apparmor_parser is not installed"
}

PROFILE=cmcp-test-job-$TUID

case "$CASE" in

confined)
    # A profile that allows what a shell needs and denies one file: the job runs confined by
    # it (its label says so) and the denied file stays unreadable although the uid may read it.
    need_apparmor
    cat >"$TMPROOT/profile" <<PROFILE_END
abi <abi/3.0>,
profile $PROFILE flags=(attach_disconnected) {
  file,
  deny /**/denied-by-apparmor r,
}
PROFILE_END
    apparmor_parser -r "$TMPROOT/profile" || fail "could not load the test profile"
    trap 'apparmor_parser -R "$TMPROOT/profile" 2>/dev/null; cleanup' EXIT
    echo secret >"$WS/denied-by-apparmor"; chown "$TUID:$TGID" "$WS/denied-by-apparmor"
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/usr/bin:/bin\"},\"layers\":[\"identity\",\"apparmor\"],\"apparmor\":{\"profile\":\"$PROFILE\"}}"
    jail 10 /bin/sh -c 'cat /proc/self/attr/current; echo; cat denied-by-apparmor; echo "rc=$?"'
    grep -q "^$PROFILE (enforce)" "$OUT" || fail "the job is not confined by $PROFILE"
    grep -q secret "$OUT" && fail "the profile's denial did not hold"
    grep -q 'rc=1' "$OUT" || fail "reading the denied file did not fail"
    pass
    ;;

syntax-*)
    # apparmor_parser compiles the profile without loading it (-QT: skip the cache and the
    # kernel, -K: no kernel feature set), which needs no AppArmor in the kernel.
    profile=${CASE#syntax-}
    command -v apparmor_parser >/dev/null || skip "apparmor_parser is not installed (apt-get install apparmor)"
    [ -f "$PROFILES_DIR/$profile" ] || fail "no profile $PROFILES_DIR/$profile"
    apparmor_parser -QT -K -I "$PROFILES_DIR" "$PROFILES_DIR/$profile" >"$OUT" 2>"$ERR" \
        || fail "apparmor_parser rejects $profile"
    # The name the daemon and the jail use must be the profile's own.
    grep -Eq "^profile ${profile}[ {]" "$PROFILES_DIR/$profile" || fail "the file does not define profile $profile"
    pass "$profile compiles"
    ;;

shipped-job-*)
    # The shipped job profile, loaded as it is installed, confines a jailed job: the job's label
    # is the profile, it writes in the workspace, and an internet socket is refused by AppArmor
    # (EACCES) where the network namespace alone would let it reach loopback (ECONNREFUSED).
    need_apparmor
    profile=cmcp-job-${CASE#shipped-job-}
    apparmor_parser -r -I "$PROFILES_DIR" "$PROFILES_DIR/$profile" || fail "could not load $profile"
    trap 'apparmor_parser -R -I "$PROFILES_DIR" "$PROFILES_DIR/$profile" 2>/dev/null; cleanup' EXIT
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/usr/bin:/bin\"},\"layers\":[\"identity\",\"namespaces\",\"apparmor\"],\"namespaces\":{},\"apparmor\":{\"profile\":\"$profile\"}}"
    if [ "$profile" = cmcp-job-python ]; then
        jail 20 /usr/bin/python3 -I -S -c '
import socket
print(open("/proc/self/attr/current").read().strip())
open("/workspace/in-ws.txt", "w").write("ok")
print("wrote-workspace")
try:
    socket.create_connection(("127.0.0.1", 1), timeout=2)
except OSError as e:
    print("net-errno", e.errno)'
    else
        jail 20 /usr/bin/bash -c 'cat /proc/self/attr/current; echo
            echo ok >/workspace/in-ws.txt && echo wrote-workspace
            (exec 3<>/dev/tcp/127.0.0.1/1) 2>&1 | grep -q "Permission denied" && echo "net-errno 13"'
    fi
    grep -q "^$profile (enforce)" "$OUT" || fail "the job is not confined by $profile"
    grep -q wrote-workspace "$OUT" || fail "the job could not write its workspace"
    grep -q "net-errno 13" "$OUT" || fail "an internet socket was not refused by AppArmor"
    pass
    ;;

*)
    fail "unknown case"
    ;;
esac
