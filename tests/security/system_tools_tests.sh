#!/usr/bin/env bash
# The system tools' jails hold on their own, without the daemon's pre-check: the policies
# cmcpd builds for system_run_command and system_run_python (cmcpd --print-job-policies) are
# run through cmcp-jail directly, and every bypass of the allow-list must fail to run `id`.
# Each bypass is first shown to run `id` under the unrestricted policy (BASH_ALLOWED_COMMANDS=*),
# so that no case passes vacuously.
#   system_tools_tests.sh <path to cmcp-jail> <case> <test uid> <path to cmcpd>
source "$(dirname "$0")/lib.sh"
CMCPD=$4
HOSTPY=/usr/bin/python3 # the host's own, never a pyenv shim

# policies NAME [--set ...]: the job policies of a cmcpd with these settings, into $TMPROOT/NAME.json.
policies() {
    local name=$1; shift
    (cd "$TMPROOT" && env -i PATH=/usr/bin:/bin "$CMCPD" --set SANDBOX_ROOT="$TMPROOT/root" \
        --set SANDBOX_REQUIRE= "$@" --print-job-policies) >"$TMPROOT/$name.json" 2>"$ERR" \
        || fail "cmcpd --print-job-policies $*"
}

# use KIND NAME: POLICY and PROGRAM of one tool's job, with this test's uid and workspace.
use() {
    POLICY=$("$HOSTPY" - "$TMPROOT/$2.json" "$1" "$TUID" "$WS" <<'EOF'
import json, sys
path, kind, uid, ws = sys.argv[1:]
policy = json.load(open(path))[kind]["policy"]
policy.update(uid=int(uid), gid=int(uid), workspace=ws)
print(json.dumps(policy))
EOF
)
    PROGRAM=$("$HOSTPY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["program"])' "$TMPROOT/$2.json" "$1")
    mapfile -t ARGS < <("$HOSTPY" -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))[sys.argv[2]].get("arguments", [])))' "$TMPROOT/$2.json" "$1")
}

# run_command COMMAND: the command tool's job as cmcpd starts it, the command on its stdin.
run_command() {
    timeout -k 2 10 "$JAIL" --policy-fd 9 -- "$PROGRAM" "${ARGS[@]}" 9<<<"$POLICY" <<<"$1" >"$OUT" 2>"$ERR"
    RC=$?
}

need_jail_layers() {
    need_root
    grep -q '"landlock"' "$TMPROOT/default.json" && grep -q '"namespaces"' "$TMPROOT/default.json" \
        || skip "the kernel lacks Landlock or namespaces: the allow-list is then held by the pre-check only"
}

case "$CASE" in

command-bypasses)
    need_root
    policies default
    policies unrestricted --set 'BASH_ALLOWED_COMMANDS=*'
    need_jail_layers
    printf 'id\n' >"$WS/script.txt"
    cp /usr/bin/id "$WS/id-copy"; chmod 755 "$WS/id-copy"
    chown -R "$TUID:$TGID" "$WS"
    ld=$(readlink -f /lib64/ld-linux-x86-64.so.2)
    bypasses=(
        'ls; id' 'ls && id' 'echo $(id)' 'echo `id`' $'ls\nid' 'find . -maxdepth 0 -exec id \;'
        '/usr/bin/id' 'env id' 'xargs id </dev/null' 'bash -c id' '/usr/bin/bash -c id'
        "python3 -c 'import os; os.system(\"id\")'" 'x=id; $x' "i''d" '"id"' '/usr/bin/i[d]'
        'eval id' 'exec id' 'source script.txt' '. ./script.txt' 'PATH=/usr/bin:/bin; id'
        'command id' 'builtin exec id' '(id)' '{ id; }' 'ls | id' 'cat <(id)' 'exec 9>&1; coproc id >&9; wait'
        'cd /usr/bin && ./id' 'exec -a ls /usr/bin/id' "$ld /usr/bin/id" 'trap id EXIT; true'
        'f() { id; }; f' 'time id' 'find . -maxdepth 0 -execdir id \;' 'dash -c id' 'sh -c id'
    )
    for bypass in "${bypasses[@]}"; do
        use command unrestricted
        run_command "$bypass"
        grep -q 'uid=' "$OUT" || fail "non-vacuous check: '$bypass' does not run id even with BASH_ALLOWED_COMMANDS=*"
        use command default
        run_command "$bypass"
        grep -q 'uid=' "$OUT" && fail "'$bypass' ran id past the kernel's allow-list"
    done
    # Programs the job writes never run, with any list.
    for bypass in './id-copy' "$ld ./id-copy"; do
        use command unrestricted
        run_command "$bypass"
        grep -q 'uid=' "$OUT" && fail "'$bypass' ran a program from the workspace"
    done
    # The allowed programs do run (the policy is not simply broken).
    use command default
    run_command 'echo hi; ls script.txt; cat script.txt; pwd; mkdir d; touch d/x; find d; grep -c id script.txt'
    expect_rc 0
    [ "$(tr '\n' ' ' <"$OUT")" = "hi script.txt id /workspace d d/x 1 " ] || fail "allowed programs: $(cat "$OUT")"
    pass "${#bypasses[@]} bypasses refused by the kernel alone"
    ;;

empty-list)
    # An empty list allows bash builtins and nothing else.
    need_root
    policies default
    policies empty --set 'BASH_ALLOWED_COMMANDS='
    need_jail_layers
    use command empty
    run_command 'echo builtin-ok; ls; /usr/bin/ls; echo "rc=$?"'
    grep -qx builtin-ok "$OUT" || fail "builtins do not work"
    grep -qx 'rc=126' "$OUT" || fail "ls was not refused with 126"
    pass
    ;;

python-escapes)
    # Python may execute nothing but itself: no shell, no other program, not through the loader.
    need_root
    policies default
    need_jail_layers
    use python default
    jail 20 "$PROGRAM" -I -S -c '
import os, subprocess
for attempt in (lambda: os.system("id"),
                lambda: subprocess.run(["/usr/bin/id"]),
                lambda: subprocess.run(["/lib64/ld-linux-x86-64.so.2", "/usr/bin/id"]),
                lambda: os.execv("/usr/bin/bash", ["bash", "-c", "id"])):
    try:
        print("status", attempt())
    except OSError as error:
        print("refused", error.errno)
import ssl, sqlite3, ctypes, json, decimal
print("modules-ok")'
    grep -q 'uid=' "$OUT" && fail "Python ran id"
    [ "$(grep -c '^refused 13$\|^status 32512$\|^status 126' "$OUT")" -ge 3 ] || fail "expected EACCES refusals"
    grep -qx modules-ok "$OUT" || fail "the standard library's extension modules do not load under exec_paths"
    pass
    ;;

*)
    fail "unknown case $CASE"
    ;;
esac
