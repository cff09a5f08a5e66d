#!/usr/bin/env bash
# config/cmcpd.service: systemd-analyze verify accepts it without a single complaint (a
# misspelt option is only a warning to systemd, so any output fails), and the hardening the
# unit's comments promise is there, with the options the jail cannot live with absent.
#   systemd_test.sh <repository root> <built cmcpd>
set -uo pipefail
ROOT=$1
CMCPD=$2
UNIT=$ROOT/config/cmcpd.service

fail() { echo "FAIL: $*"; exit 1; }

value() { sed -n "s/^$1=//p" "$UNIT"; }

[ "$(value NoNewPrivileges)" = yes ] || fail "NoNewPrivileges=yes missing"
[ "$(value PrivateTmp)" = yes ] || fail "PrivateTmp=yes missing"
[ "$(value ProtectSystem)" = strict ] || fail "ProtectSystem=strict missing"
[ "$(value ReadWritePaths)" = /var/lib/container-mcp ] || fail "ReadWritePaths is not the state directory"
for namespace in user mnt pid net ipc uts cgroup; do
    grep -qw "$namespace" <<<"$(value RestrictNamespaces)" || fail "RestrictNamespaces lacks $namespace, which the jail creates"
done
for cap in CAP_SETUID CAP_SETGID CAP_SETPCAP CAP_KILL; do
    grep -qw "$cap" <<<"$(value CapabilityBoundingSet)" || fail "CapabilityBoundingSet lacks $cap, which the jail needs"
done
grep -qw CAP_SYS_ADMIN <<<"$(value CapabilityBoundingSet)" && fail "CapabilityBoundingSet grants CAP_SYS_ADMIN"
# Each of these takes away something the jail needs (the unit says why): set to yes, it breaks jobs.
for option in ProtectControlGroups ProtectKernelTunables PrivateUsers RestrictSUIDSGID MemoryDenyWriteExecute; do
    [ "$(value "$option")" = yes ] && fail "$option=yes breaks the jail (see the unit's comments)"
done

command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed: the options were checked, the syntax not"; exit 77; }
copy=$(mktemp --suffix=.service)
trap 'rm -f "$copy"' EXIT
# The unit names the installed binary; verify wants it to exist, so the built one stands in.
sed "s|^ExecStart=/usr/local/bin/cmcpd|ExecStart=$CMCPD|" "$UNIT" >"$copy"
output=$(systemd-analyze verify "$copy" 2>&1) || fail "systemd-analyze verify failed: $output"
[ -z "$output" ] || fail "systemd-analyze verify complains: $output"
echo "PASS: the unit verifies and keeps its hardening"
