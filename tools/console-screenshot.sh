#!/bin/sh
# Takes the picture of cmcp-console in docs/console.md: starts a real cmcpd in a scratch directory, makes
# live MCP calls over HTTP with curl (some succeed, one fails, one keeps running), and has the
# real console save its window under Xvfb.
#   tools/console-screenshot.sh [BUILD_DIR] [OUTPUT_PNG] [TAB]
# TAB: the tab to show (e.g. Workspaces); the calls by default.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
output=${2:-$repo/docs/console.png}
tab=${3:-}
case $output in /*) ;; *) output=$(pwd)/$output ;; esac
scratch=$(mktemp -d)
daemon=
cleanup() {
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    rm -rf "$scratch"
}
trap cleanup EXIT INT TERM

# Jobs run as uids of the pool, which must reach the workspace inside.
chmod 755 "$scratch"
cd "$scratch"
"$build/server/cmcpd" --port 0 --set ADMIN_SOCKET="$scratch/admin.sock" \
    --set BASH_ALLOWED_COMMANDS=echo,ls,sleep,cat --set BASH_TIMEOUT_MAX=600 2>"$scratch/cmcpd.log" &
daemon=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$scratch/cmcpd.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { cat "$scratch/cmcpd.log" >&2; exit 1; }
url=http://127.0.0.1:$port/mcp

post() { # session, body
    curl -s -D "$scratch/headers" -H 'Content-Type: application/json' \
         -H 'Accept: application/json, text/event-stream' ${1:+-H "Mcp-Session-Id: $1"} \
         -H 'MCP-Protocol-Version: 2025-06-18' --data "$2" "$url" >/dev/null
}
open_session() { # client name
    post "" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"'"$1"'","version":"1"}}}'
    session=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([^\r]*\).*/\1/p' "$scratch/headers")
    post "$session" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    echo "$session"
}
call() { # session, tool, arguments
    post "$1" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"'"$2"'","arguments":'"$3"'}}'
}

# Qt wants a runtime directory and, without one, makes /tmp/runtime-$USER and leaves it.
mkdir -m 700 "$scratch/xdg-runtime"
XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$scratch/xdg-runtime} \
QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-xcb} xvfb-run -a -s '-screen 0 1280x800x24' \
    "$build/console/cmcp-console" --socket "$scratch/admin.sock" --screenshot "$output" --screenshot-after 6000 ${tab:+--tab "$tab"} &
console=$!
sleep 2
claude=$(open_session claude-desktop)
inspector=$(open_session mcp-inspector)
call "$claude" file_write '{"path":"notes.md","content":"# Notes\nThe console shows every call."}'
call "$claude" file_read '{"path":"notes.md"}'
call "$inspector" system_run_command '{"command":"echo hello from the jail"}'
call "$inspector" file_list '{"path":"/"}'
call "$claude" file_read '{"path":"secret.key"}'
call "$claude" system_run_command '{"command":"ls -la"}'
call "$inspector" system_run_command '{"command":"cat notes.md"}'
call "$claude" file_search '{"pattern":"console"}' || true
call "$claude" workspace_create '{"name":"website"}'
call "$claude" workspace_create '{"name":"data-analysis"}'
call "$claude" file_write '{"workspace":"website","path":"index.md","content":"# Home"}'
call "$inspector" system_run_command '{"workspace":"website","command":"sleep 30","background":true}' 
# Still running when the picture is taken, printing as it goes: its row shows the progress.
call "$inspector" system_run_command '{"command":"for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo step $i of the build; sleep 1; done","timeout":120}' &
wait "$console"
echo "saved $output"
