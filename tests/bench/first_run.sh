#!/usr/bin/env bash
# The README's first `./bin/cmcp run` on a Debian 12 machine that has none of the project's
# packages, timed until /health answers: a debootstrap root (minbase, plus git, curl,
# ca-certificates and sudo that a user's machine has to clone with), entered with chroot in a
# mount namespace of its own, the repository cloned into its /root (mode 0700). Needs root, the
# Debian mirror and port 8000 free on this machine's loopback (the chroot shares its network).
#
#   tests/bench/first_run.sh [COMMIT] [WORK]      (default: HEAD, build/bench-results/first-run)
#
# The root is made once and kept as a tarball in WORK; every measurement starts from a new copy
# of it. The measurement runs ahead of other work on the machine (its autogroup at nice -15).
set -euo pipefail
repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
commit=${1:-HEAD}
work=${2:-$repo/build/bench-results/first-run}
[[ $EUID -eq 0 ]] || { echo "first_run.sh needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
echo -15 >/proc/self/autogroup 2>/dev/null || true
mkdir -p -- "$work"
pristine=$work/bookworm-minbase.tar
if [[ ! -f $pristine ]]; then
    debootstrap --variant=minbase --include=git,ca-certificates,curl,sudo bookworm \
        "$work/make-root" http://deb.debian.org/debian >"$work/debootstrap.log"
    cat >"$work/make-root/etc/apt/sources.list" <<'SOURCES'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
    tar -C "$work/make-root" -cf "$pristine" .
    rm -rf -- "$work/make-root"
fi
root=$work/root
rm -rf -- "$root" && mkdir -p -- "$root" && tar -C "$root" -xf "$pristine"
git clone -q "$repo" "$root/root/cmcp"
git -C "$root/root/cmcp" checkout -q "$(git -C "$repo" rev-parse "$commit")"
chmod 0700 "$root/root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
curl -sf -o /dev/null http://127.0.0.1:8000/health && { echo "port 8000 is in use" >&2; exit 1; }

log=$work/run.log
start=$(date +%s.%N)
unshare --mount --propagation private -- bash -c '
    root=$1
    mount -t proc proc "$root/proc" && mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev" && mount -t tmpfs tmpfs "$root/tmp"
    exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        bash -c "cd /root/cmcp && exec ./bin/cmcp run"' first-run "$root" >"$log" 2>&1 &
runner=$!
until curl -sf -o /dev/null http://127.0.0.1:8000/health; do
    kill -0 "$runner" 2>/dev/null || { echo "run ended before /health answered:" >&2; tail -30 "$log" >&2; exit 1; }
    sleep 0.5
done
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "first run to /health: %.0f s\n", b - a }'
grep -E '^cmcp: apt: downloading' "$log" || true
grep -E 'build step' "$log" | tail -1 || true
curl -s http://127.0.0.1:8000/health && echo
# Only the processes whose root is this one: other daemons on the machine are not ours.
for proc in /proc/[0-9]*; do
    [[ $(readlink "$proc/root" 2>/dev/null) == "$root" ]] && kill -TERM "${proc#/proc/}" 2>/dev/null
done
wait "$runner" || true
