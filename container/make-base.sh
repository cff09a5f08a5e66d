#!/usr/bin/env bash
# Makes the container base image locally, with no container registry: debootstrap a minimal
# Debian into a directory, tar it, and `podman import` the tarball. The tarball is cached, so
# later runs only import it (seconds) instead of bootstrapping again (about 90 s).
#   make-base.sh ENGINE IMAGE_NAME [SUITE] [MIRROR]
# Environment: CMCP_BASE_CACHE (default /var/cache/container-mcp) holds <suite>-minbase.tar.
# Needs root (debootstrap makes device nodes and chowns files).
set -euo pipefail

engine=${1:?engine (podman or docker)}
image=${2:?image name}
suite=${3:-bookworm}
mirror=${4:-http://deb.debian.org/debian}
cache=${CMCP_BASE_CACHE:-/var/cache/container-mcp}
tarball=$cache/$suite-minbase.tar

log() { printf 'make-base: %s\n' "$*" >&2; }

if "$engine" image exists "$image" 2>/dev/null \
        || { [[ $engine == docker ]] && docker image inspect "$image" >/dev/null 2>&1; }; then
    log "$image already exists"
    exit 0
fi

if [[ ! -s $tarball ]]; then
    command -v debootstrap >/dev/null || { log "debootstrap is not installed"; exit 1; }
    mkdir -p "$cache"
    root=$(mktemp -d "$cache/rootfs.XXXXXX")
    trap 'rm -rf -- "$root"' EXIT
    log "debootstrap --variant=minbase $suite from $mirror (about 90 s)"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >&2
    # The image's apt uses the same mirror, with the security and updates suites.
    rm -rf -- "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    # Written beside the final name and renamed, so an interrupted run leaves no half tarball.
    tar --numeric-owner --xattrs -C "$root" -cf "$tarball.part" .
    mv -- "$tarball.part" "$tarball"
fi
log "importing $tarball as $image"
"$engine" import --change 'CMD ["/bin/bash"]' "$tarball" "$image" >/dev/null
