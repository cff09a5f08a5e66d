#!/usr/bin/env bash
# The container end to end: makes the Debian base locally (debootstrap, tar, podman import; the
# tarball is cached), builds container/Containerfile, checks the image (non-root user, no
# compiler, HEALTHCHECK, port, volumes), runs it with Podman and runc under the shipped seccomp
# profile, waits for /health, and drives real tool calls through the MCP SDK client
# (tool_calls.test.mjs). Prints how long each phase took.
#   container_test.sh <node>
# Exit 0 pass, 1 fail, 77 skip with the reason: it runs only when CMCP_CONTAINER_TEST=1
# (`./bin/cmcp container test` sets it after installing Podman), as root, with podman, runc and
# debootstrap present.
set -uo pipefail

NODE=$1
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
IMAGE=${CMCP_TEST_IMAGE:-localhost/container-mcp:test}
BASE=${CMCP_BASE:-localhost/cmcp-base:bookworm}
NAME=cmcp-container-test-$$
START=$SECONDS
PHASE_START=$SECONDS

skip() { echo "SKIP: $*"; exit 77; }
fail() {
    echo "FAIL: $*"
    podman logs --tail 40 "$NAME" 2>&1 | sed 's/^/cmcpd: /'
    exit 1
}
phase() { echo "phase: $1 took $((SECONDS - PHASE_START)) s"; PHASE_START=$SECONDS; }

[ "${CMCP_CONTAINER_TEST-}" = 1 ] \
    || skip "the container test runs by label: ./bin/cmcp container test (installs Podman, about 15 min on a fresh machine)"
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, rootful Podman)"
for tool in podman runc debootstrap; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (./bin/cmcp container test installs it)"
done

cleanup() { podman rm -f "$NAME" >/dev/null 2>&1; }
trap cleanup EXIT

runtime=()
[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || runtime=(--runtime runc)
# Explicit rlimits, at most this shell's hard limits: without them runc fails to start
# containers here (container/README.md).
nofile=$(ulimit -Hn)
{ [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ]; } && nofile=65536
limits=(--ulimit "nofile=$nofile:$nofile" --ulimit nproc=4096:4096)

"$ROOT/container/make-base.sh" podman "$BASE" || fail "could not make the base image $BASE"
phase "base image"
timeout 3000 podman build --format docker "${runtime[@]}" --build-arg "BASE=$BASE" \
    -f "$ROOT/container/Containerfile" -t "$IMAGE" "$ROOT" >build.log 2>&1 \
    || { tail -40 build.log; fail "podman build failed (build.log)"; }
phase "image build"

# What the image promises: it runs as cmcp, exposes 8000, checks /health and declares its volumes.
[ "$(podman image inspect --format '{{.Config.User}}' "$IMAGE")" = cmcp ] || fail "the image does not run as cmcp"
podman image inspect --format '{{json .Config.ExposedPorts}}' "$IMAGE" | grep -q '"8000/tcp"' || fail "port 8000 is not exposed"
podman image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE" | grep -q '/health' || fail "no HEALTHCHECK on /health"
volumes=$(podman image inspect --format '{{json .Config.Volumes}}' "$IMAGE")
for volume in config data logs sandbox; do
    grep -q "/app/volume/$volume" <<<"$volumes" || fail "no volume /app/volume/$volume ($volumes)"
done
# No compiler, no -dev package: the final stage has runtime libraries only. The last line proves
# the check ran (podman run fails, for one, without explicit rlimits here).
leftovers=$(podman run --rm "${runtime[@]}" "${limits[@]}" --entrypoint /bin/sh "$IMAGE" -c \
    'for c in gcc g++ cc c++ clang; do command -v "$c"; done
     dpkg-query -W -f "\${Package}\n" | grep -- "-dev$"
     echo checked') || fail "could not run a shell in the image"
[ "$leftovers" = checked ] || fail "the runtime image holds a compiler or a -dev package: $leftovers"
# Without arguments cmcp-jail exits 90 with its usage.
jail_usage=$(podman run --rm "${runtime[@]}" "${limits[@]}" --entrypoint /usr/local/libexec/container-mcp/cmcp-jail "$IMAGE" 2>&1)
grep -q 'usage: exactly one of --policy-fd' <<<"$jail_usage" || fail "cmcp-jail is not installed in the image: $jail_usage"
phase "image checks"

# The web tools fetch from a page server in the container's own network, which the daemon
# shares (jobs do not): the settings allow it by name and address.
PAGES_PORT=8999
# The options of ./bin/cmcp container run (container/cmcp-container.sh security_args).
podman run -d --name "$NAME" "${runtime[@]}" "${limits[@]}" \
    --security-opt "seccomp=$ROOT/container/seccomp.json" --security-opt 'unmask=/proc/*' \
    --security-opt no-new-privileges --cap-drop ALL \
    -e MCP_ALLOW_UNAUTHENTICATED_REMOTE=true \
    -e WEB_ALLOW_PRIVATE=true -e WEB_ALLOWED_DOMAINS=127.0.0.1 \
    -e "WEB_SEARCH_URL=http://127.0.0.1:$PAGES_PORT/searxng" \
    -p 127.0.0.1::8000 "$IMAGE" >/dev/null || fail "podman run failed"
port=$(podman port "$NAME" 8000/tcp | sed -n 's/^127\.0\.0\.1:\([0-9]*\)$/\1/p' | head -n 1)
[ -n "$port" ] || fail "no published port on 127.0.0.1"
healthy=0
for _ in $(seq 1 100); do
    if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=1)" 2>/dev/null; then
        healthy=1; break
    fi
    [ "$(podman inspect --format '{{.State.Running}}' "$NAME")" = true ] || fail "cmcpd exited in the container"
    sleep 0.2
done
[ $healthy = 1 ] || fail "no answer on http://127.0.0.1:$port/health within 20 s"
podman healthcheck run "$NAME" >/dev/null || fail "the image's HEALTHCHECK fails"
echo "sandbox table of the containerised cmcpd:"
podman logs "$NAME" 2>&1 | grep -iE 'layer|available|unavailable' | head -20 | sed 's/^/  /'
phase "start to healthy"
podman cp "$HERE/page_server.py" "$NAME:/tmp/page_server.py" || fail "could not copy the page server"
podman exec -d "$NAME" python3 /tmp/page_server.py "$PAGES_PORT" || fail "could not start the page server"

CMCP_URL="http://127.0.0.1:$port/mcp" CMCP_PAGES_URL="http://127.0.0.1:$PAGES_PORT" timeout 300 "$NODE" --test --test-reporter=spec \
    "$HERE/tool_calls.test.mjs" || fail "tool calls through the MCP client failed"
phase "tool calls"
echo "PASS: the whole container test took $((SECONDS - START)) s"
