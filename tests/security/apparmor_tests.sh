#!/usr/bin/env bash
# Security tests for the jail's AppArmor layer: the job execs under the policy's profile.
#   apparmor_tests.sh <path to cmcp-jail> <case> <test uid>
# Skips, with the reason, where the kernel has no AppArmor (the jail then refuses the layer:
# see jail_tests.sh fail-closed) or apparmor_parser is missing.
source "$(dirname "$0")/lib.sh"

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

*)
    fail "unknown case"
    ;;
esac
