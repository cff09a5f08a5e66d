#!/usr/bin/env bash
# `cmake --install` into a fresh prefix puts every file where the FHS layout wants it
# (cmake/InstallLayout.cmake), the systemd unit names the installed cmcpd, and the installed
# daemon runs from that tree alone (installed_daemon.test.mjs).
#   layout_test.sh <build dir> <node>
set -uo pipefail
BUILD=$1
NODE=$2
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

fail() { echo "FAIL: $*"; exit 1; }

[[ -x $NODE ]] || { echo "SKIP: $NODE is missing (./bin/cmcp deps installs it)"; exit 77; }
root=$(mktemp -d "${TMPDIR:-/tmp}/cmcp-layout.XXXXXX")
trap 'rm -rf -- "$root"' EXIT
# Jobs and the browser worker run as pool uids, which pass through the installed tree.
chmod 0755 "$root"
prefix=$root/usr
cmake --install "$BUILD" --prefix "$prefix" >"$root/install.log" 2>&1 \
    || { cat "$root/install.log"; fail "cmake --install failed"; }

# What is there, relative to the prefix, against what must be.
actual=$(cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | LC_ALL=C sort)
expected=$(LC_ALL=C sort <<'EOF_LIST'
bin/cmcp-console
bin/cmcpd
lib/systemd/system/cmcpd.service
libexec/container-mcp/cmcp-browser
libexec/container-mcp/cmcp-html
libexec/container-mcp/cmcp-jail
libexec/container-mcp/libcmcp-zygote.so
share/container-mcp/apparmor/cmcp-browser
share/container-mcp/apparmor/cmcp-container
share/container-mcp/apparmor/cmcp-jail
share/container-mcp/apparmor/cmcp-job-bash
share/container-mcp/apparmor/cmcp-job-python
share/container-mcp/apparmor/cmcpd
share/container-mcp/apparmor/install.sh
share/container-mcp/apparmor/tunables/cmcp
share/container-mcp/custom.env.example
share/container-mcp/default.env
share/doc/container-mcp/README.md
share/doc/container-mcp/configuration.md
share/doc/container-mcp/install.md
share/doc/container-mcp/security-model.md
EOF_LIST
)
[[ $actual == "$expected" ]] || fail "the installed tree differs from the layout (< installed, > expected):
$(diff <(echo "$actual") <(echo "$expected"))"

for program in bin/cmcpd bin/cmcp-console libexec/container-mcp/cmcp-jail libexec/container-mcp/cmcp-html \
               libexec/container-mcp/cmcp-browser share/container-mcp/apparmor/install.sh; do
    [[ -x $prefix/$program ]] || fail "$program is not executable"
done
unit=$prefix/lib/systemd/system/cmcpd.service
grep -qx "ExecStart=$prefix/bin/cmcpd --config /etc/container-mcp/custom.env" "$unit" \
    || fail "the unit does not start the installed cmcpd: $(grep '^ExecStart=' "$unit")"
grep -q '/usr/local/' "$unit" && fail "the unit still names /usr/local: $(grep -n '/usr/local/' "$unit")"
# The AppArmor profiles attach to the paths the programs are installed at.
grep -q '^@{CMCP_HELPERS}=.*/usr/libexec/container-mcp' "$prefix/share/container-mcp/apparmor/tunables/cmcp" \
    || fail "tunables/cmcp does not name the helpers' directory"

CMCP_INSTALLED_PREFIX=$prefix "$NODE" --test --test-reporter=spec "$HERE/installed_daemon.test.mjs" \
    || fail "the installed daemon"
echo "PASS: the install has the FHS layout and its daemon runs from it"
