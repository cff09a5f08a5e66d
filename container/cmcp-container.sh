#!/usr/bin/env bash
# ./bin/cmcp container COMMAND: the container path of Container-MCP, with whichever engine is
# present (Podman preferred, else Docker). The original project's step scripts map to:
#   01-init.sh              -> init    volume directories and volume/config/custom.env
#   02-build-container.sh   -> build   the local base image (if missing) and the image
#   03-setup-environment.sh -> env     the host side: AppArmor profiles where the kernel has them
#   04-run-container.sh     -> run     start the container on 127.0.0.1:$CMCP_PORT
#   05-run-tests.sh         -> test    the ctest tests labelled "container" (bin/cmcp runs those)
#   00-all-in-one.sh        -> all     init, build, env, run
# Environment: CMCP_ENGINE (podman|docker), CMCP_IMAGE (default localhost/container-mcp:latest),
# CMCP_BASE (default localhost/cmcp-base:bookworm, made by make-base.sh when missing),
# CMCP_CONTAINER_NAME (default cmcpd), CMCP_PORT (default 8000), CMCP_RUNTIME (OCI runtime).
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)
readonly ROOT
readonly IMAGE=${CMCP_IMAGE:-localhost/container-mcp:latest}
readonly BASE=${CMCP_BASE:-localhost/cmcp-base:bookworm}
readonly NAME=${CMCP_CONTAINER_NAME:-cmcpd}
readonly PORT=${CMCP_PORT:-8000}

log() { printf 'cmcp container: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

engine() {
    if [[ -n ${CMCP_ENGINE-} ]]; then
        command -v "$CMCP_ENGINE" >/dev/null || die "CMCP_ENGINE=$CMCP_ENGINE is not installed"
        printf '%s\n' "$CMCP_ENGINE"
    elif command -v podman >/dev/null; then
        echo podman
    elif command -v docker >/dev/null; then
        echo docker
    else
        die "neither podman nor docker is installed (./bin/cmcp container deps installs podman)"
    fi
}

# The OCI runtime to ask for. crun (Podman's default where installed) refuses hybrid cgroup
# hierarchies (cgroup v1 controllers beside an empty v2 tree), runc works with them.
runtime_args() {
    local runtime=${CMCP_RUNTIME-}
    if [[ -z $runtime && $(engine) == podman && $(stat -f -c %T /sys/fs/cgroup) != cgroup2fs ]] \
        && command -v runc >/dev/null; then
        runtime=runc
    fi
    [[ -n $runtime ]] && printf '%s\n' --runtime "$runtime"
    return 0
}

# The least privilege the jail's layers need in the container (measured: container/README.md):
# the engine's default seccomp profile plus namespace creation, /proc without the engine's masks
# (the kernel refuses the jail a fresh /proc for the job's pid namespace while parts of the
# container's are covered), no capability at all, no_new_privs. Podman passes explicit rlimits
# to runc here, which fail above the caller's hard limits (root lacks CAP_SYS_RESOURCE), so
# nofile is capped at this shell's hard limit.
security_args() {
    local nofile=65536 hard unmask='unmask=/proc/*'
    hard=$(ulimit -Hn)
    [[ $hard != unlimited ]] && ((hard < nofile)) && nofile=$hard
    # Docker's name for the same: no masked or read-only paths under /proc and /sys.
    [[ $(engine) == docker ]] && unmask=systempaths=unconfined
    printf '%s\n' --security-opt "seccomp=$ROOT/container/seccomp.json" \
        --security-opt "$unmask" --security-opt no-new-privileges --cap-drop ALL \
        --ulimit "nofile=$nofile:$nofile" --ulimit nproc=4096:4096
}

cmd_init() {
    mkdir -p "$ROOT/volume/config" "$ROOT/volume/data" "$ROOT/volume/logs" "$ROOT/volume/sandbox"
    if [[ ! -f $ROOT/volume/config/custom.env ]]; then
        cp "$ROOT/config/custom.env.example" "$ROOT/volume/config/custom.env"
        log "wrote volume/config/custom.env from config/custom.env.example"
    fi
}

cmd_build() {
    local eng base=$BASE
    eng=$(engine)
    if [[ $base == localhost/cmcp-base:* ]]; then
        "$ROOT/container/make-base.sh" "$eng" "$base" "${base#localhost/cmcp-base:}"
    fi
    local format=() runtime
    # Podman writes OCI images by default, which drop HEALTHCHECK.
    [[ $eng == podman ]] && format=(--format docker)
    mapfile -t runtime < <(runtime_args)
    "$eng" build "${format[@]}" --build-arg "BASE=$base" "${runtime[@]}" \
        -f "$ROOT/container/Containerfile" -t "$IMAGE" "$ROOT"
}

cmd_env() {
    "$ROOT/apparmor/install.sh" || log "continuing without host AppArmor profiles (see above)"
    cmd_init
}

cmd_run() {
    local eng runtime security
    eng=$(engine)
    cmd_init
    "$eng" rm -f "$NAME" >/dev/null 2>&1 || true
    mapfile -t runtime < <(runtime_args)
    mapfile -t security < <(security_args)
    "$eng" run -d --name "$NAME" "${runtime[@]}" "${security[@]}" \
        -p "127.0.0.1:$PORT:8000" -e MCP_ALLOW_UNAUTHENTICATED_REMOTE=true \
        -v "$ROOT/volume/config:/app/volume/config:Z" \
        -v cmcp-data:/app/volume/data -v cmcp-logs:/app/volume/logs \
        -v cmcp-sandbox:/app/volume/sandbox \
        "$IMAGE" "$@" >/dev/null
    log "started $NAME from $IMAGE: http://127.0.0.1:$PORT/mcp (legacy SSE: /sse); logs: $eng logs $NAME"
}

cmd_stop() {
    "$(engine)" rm -f "$NAME" >/dev/null
}

usage() {
    cat <<'EOF_USAGE'
Usage: bin/cmcp container COMMAND

  init    create volume/{config,data,logs,sandbox} and volume/config/custom.env
  build   make the local Debian base if missing, then build the image (CMCP_IMAGE)
  env     load the AppArmor profiles on this host (where the kernel has AppArmor), then init
  run     start the container on 127.0.0.1:${CMCP_PORT:-8000} (extra args go to cmcpd)
  stop    remove the running container
  test    install podman, runc and debootstrap if missing, then run the ctest tests
          labelled "container" (image built from a local base, a tool call through the MCP client)
  all     init, build, env, run (the original's 00-all-in-one.sh)
EOF_USAGE
}

main() {
    local command=${1-}
    (($#)) && shift
    case "$command" in
        init) cmd_init ;;
        build) cmd_build ;;
        env) cmd_env ;;
        run) cmd_run "$@" ;;
        stop) cmd_stop ;;
        all) cmd_init && cmd_build && cmd_env && cmd_run "$@" ;;
        help | -h | --help | "") usage ;;
        *) usage >&2; exit 2 ;;
    esac
}

main "$@"
