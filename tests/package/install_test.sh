#!/usr/bin/env bash
# The .deb packages, made by CPack from this build tree, installed and removed with dpkg.
#   install_test.sh <build dir> <node>
#
# dpkg installs them for real, maintainer scripts and all, into a throwaway copy of this
# machine's root: in a mount namespace of its own, /usr, /etc and /var are overlays whose
# writable layers are temporary directories, so the host's files and dpkg database never change
# and the libraries the packages depend on are the distribution's own, as on an operator's
# machine. The installed cmcpd, started with the configuration the postinst wrote, must answer
# /health and run a jailed call and a template call with the installed jail and zygote library
# (installed_daemon.test.mjs); `dpkg --purge` must then leave nothing behind in /etc and /var.
#
# It builds the packages (about a minute) and needs root for the mount namespace: it is not in the
# default pass and skips unless CMCP_PACKAGE_TEST=1 (`./bin/cmcp package test` sets it). What
# the maintainer scripts do outside the file system does reach the host: on a kernel with
# AppArmor the postinst loads the profiles and the purge unloads them, and under systemd they
# ask systemd to reload, enable and start a unit that only this namespace can see (which fails,
# and the scripts go on).
set -uo pipefail
BUILD=$(cd -- "$1" && pwd)
NODE=$2
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
readonly PACKAGES="container-mcp container-mcp-browser container-mcp-console"

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

[[ ${CMCP_PACKAGE_TEST-} == 1 ]] || skip "builds and installs the .deb packages: run with CMCP_PACKAGE_TEST=1 (./bin/cmcp package test)"
[[ $EUID -eq 0 ]] || skip "needs root: dpkg installs into overlays in a mount namespace of its own"
command -v unshare >/dev/null || skip "needs unshare (util-linux)"
[[ -x $NODE ]] || skip "$NODE is missing (./bin/cmcp deps installs it)"
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
grep -qw overlay /proc/filesystems || skip "the kernel has no overlay file system"

work=$(mktemp -d "${TMPDIR:-/tmp}/cmcp-package.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
chmod 0755 "$work"

# ---- build ---------------------------------------------------------------------------------
started=$SECONDS
cpack --config "$BUILD/CPackConfig.cmake" -B "$work/debs" >"$work/cpack.log" 2>&1 \
    || { cat "$work/cpack.log"; fail "cpack failed"; }
echo "built the packages in $((SECONDS - started)) s"
debs=()
for package in $PACKAGES; do
    deb=$(find "$work/debs" -maxdepth 1 -name "${package}_*.deb" | head -n 1)
    [[ -n $deb ]] || fail "cpack made no $package package: $(ls "$work/debs")"
    debs+=("$deb")
    printf '  %-48s %6d KiB (installed: %s KiB)\n' "$(basename "$deb")" "$(($(stat -c %s "$deb") / 1024))" \
        "$(dpkg-deb -f "$deb" Installed-Size)"
done

# ---- what the packages say -----------------------------------------------------------------
depends() { dpkg-deb -f "$1" Depends; }
# dpkg-shlibdeps derived the libraries from the programs; the rest is named by hand.
for library in libqt6core6 libqt6network6 libqt6httpserver6 libspdlog1.10 libssl3 libseccomp2 libgumbo1; do
    grep -qw "$library" <<<"$(depends "${debs[0]}")" || fail "container-mcp does not depend on $library: $(depends "${debs[0]}")"
done
for needed in bash python3 ca-certificates; do
    grep -qw "$needed" <<<"$(depends "${debs[0]}")" || fail "container-mcp does not depend on $needed"
done
for needed in libqt6webenginecore6 libqt6webenginecore6-bin "container-mcp (= "; do
    grep -qF "$needed" <<<"$(depends "${debs[1]}")" || fail "container-mcp-browser does not depend on $needed: $(depends "${debs[1]}")"
done
for needed in libqt6widgets6 qt6-qpa-plugins; do
    grep -qw "$needed" <<<"$(depends "${debs[2]}")" || fail "container-mcp-console does not depend on $needed: $(depends "${debs[2]}")"
done
contents=$(dpkg-deb -c "${debs[0]}")
grep -q ' ./usr/lib/systemd/system/cmcpd.service$' <<<"$contents" || fail "container-mcp has no systemd unit"
grep -q ' ./usr/libexec/container-mcp/libcmcp-zygote.so$' <<<"$contents" || fail "container-mcp has no zygote library"
# Stripped: no debug sections in what is shipped.
mkdir "$work/daemon"
dpkg-deb -x "${debs[0]}" "$work/daemon"
if readelf -S "$work/daemon/usr/bin/cmcpd" | grep -q '\.debug_'; then fail "cmcpd is shipped with debug sections"; fi

# ---- install, run, remove in a throwaway root ----------------------------------------------
mkdir -p "$work"/{usr,etc,var}/{upper,work}
CMCP_PACKAGE_WORK=$work CMCP_TEST_NODE=$NODE CMCP_TEST_DIR=$HERE \
    unshare --mount --propagation private -- bash -s -- "${debs[@]}" <<'EOF_INSIDE'
set -uo pipefail
fail() { echo "FAIL: $*"; exit 1; }
for tree in usr etc var; do
    mount -t overlay "cmcp-package-$tree" \
        -o "lowerdir=/$tree,upperdir=$CMCP_PACKAGE_WORK/$tree/upper,workdir=$CMCP_PACKAGE_WORK/$tree/work" "/$tree" \
        || fail "cannot overlay /$tree"
done
# dpkg's own state as it is, untouched below the overlay.
dpkg --install "$@" >"$CMCP_PACKAGE_WORK/dpkg-install.log" 2>&1 \
    || { cat "$CMCP_PACKAGE_WORK/dpkg-install.log"; fail "dpkg --install failed"; }
for package in container-mcp container-mcp-browser container-mcp-console; do
    [[ $(dpkg-query -W -f='${Status}' "$package") == "install ok installed" ]] || fail "$package is not installed"
done
config=/etc/container-mcp/custom.env
[[ -f $config ]] || fail "the postinst wrote no $config"
[[ $(stat -c %a "$config") == 600 ]] || fail "$config is mode $(stat -c %a "$config"), not 600"
[[ -d /var/lib/container-mcp ]] || fail "the postinst made no /var/lib/container-mcp"
/usr/bin/cmcpd --version >/dev/null || fail "the installed cmcpd does not start"

CMCP_INSTALLED_PREFIX=/usr CMCP_INSTALLED_CONFIG=$config \
    "$CMCP_TEST_NODE" --test --test-reporter=spec "$CMCP_TEST_DIR/installed_daemon.test.mjs" \
    || fail "the installed daemon"

dpkg --purge container-mcp-console container-mcp-browser container-mcp >"$CMCP_PACKAGE_WORK/dpkg-purge.log" 2>&1 \
    || { cat "$CMCP_PACKAGE_WORK/dpkg-purge.log"; fail "dpkg --purge failed"; }
for path in /usr/bin/cmcpd /usr/bin/cmcp-console /usr/libexec/container-mcp /usr/share/container-mcp \
            /usr/lib/systemd/system/cmcpd.service /etc/container-mcp /var/lib/container-mcp; do
    [[ -e $path ]] && fail "$path is left after dpkg --purge"
done
exit 0
EOF_INSIDE
status=$?
((status == 0)) || exit "$status"
# What the install and purge changed in /etc and /var beyond dpkg's own records and logs.
left=$(cd "$work" && find etc/upper var/upper -mindepth 1 \
    -not -path 'var/upper/lib' -not -path 'var/upper/lib/dpkg' -not -path 'var/upper/lib/dpkg/*' \
    -not -path 'var/upper/log' -not -path 'var/upper/log/dpkg.log' \
    -not -path 'var/upper/cache' -not -path 'var/upper/cache/*' | sed 's|/upper||')
[[ -z $left ]] || fail "installing and purging the packages left behind:
$left"
echo "PASS: the packages install with dpkg, their daemon serves, and they purge cleanly"
