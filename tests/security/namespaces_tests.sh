#!/usr/bin/env bash
# Security tests for the jail's namespaces layer and its monitor: the minimal root, the job's
# user namespace, loopback-only networking, the pid namespace taking the whole job down.
#   namespaces_tests.sh <path to cmcp-jail> <case> <test uid>
source "$(dirname "$0")/lib.sh"

# policy [namespaces-json] [layers-json] [extra-json-members]
policy() {
    local ns=${1:-'{}'} layers=${2:-'["identity","rlimits","namespaces"]'} extra=${3:-}
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/usr/bin:/bin\",\"LANG\":\"C\"},\"limits\":{\"processes\":256},\"layers\":$layers,\"namespaces\":$ns$extra}"
}

need_namespaces() {
    need_root
    unshare -U -m -p -f -n true 2>/dev/null || skip "this kernel refuses unprivileged namespaces (unshare -Umpnf failed)"
}

# The job's host pid, from the monitor's "started" record.
job_pid() { sed -n 's/.*"event":"started".*"pid":\([0-9]*\).*/\1/p' "$TMPROOT/report"; }

case "$CASE" in

identity)
    # Inside: uid 1000 mapped to the test uid and nothing else; no capability; files the job
    # writes belong to the test uid on the host.
    need_namespaces
    policy '{}' '["identity","rlimits","namespaces","seccomp"]'
    jail 10 /bin/sh -c 'id; cat /proc/self/uid_map /proc/self/gid_map; grep -E "^(Cap[A-Za-z]+|NoNewPrivs|Seccomp):" /proc/self/status; echo x >owned'
    expect_rc 0
    grep -qx 'uid=1000(sandbox) gid=1000(sandbox) groups=1000(sandbox)' "$OUT" || fail "id inside is not sandbox 1000"
    [ "$(grep -c "^ *1000 *$TUID *1\$" "$OUT")" -eq 2 ] || fail "uid_map/gid_map is not exactly 1000 -> $TUID"
    for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
        grep -Eq "^$cap:[[:space:]]+0+\$" "$OUT" || fail "$cap is not zero"
    done
    grep -Eq '^NoNewPrivs:[[:space:]]+1$' "$OUT" || fail "NoNewPrivs is not 1"
    grep -Eq '^Seccomp:[[:space:]]+2$' "$OUT" || fail "seccomp is not in filter mode"
    [ "$(stat -c %u:%g "$WS/owned")" = "$TUID:$TGID" ] || fail "the job's file is owned by $(stat -c %u:%g "$WS/owned") on the host"
    pass
    ;;

host-files)
    # The host's secrets and other processes are not in the job's world.
    need_namespaces
    sleep 30 &
    BGPIDS+=($!)
    policy
    jail 10 /bin/sh -c "ls /etc; echo ---; ls /; echo ---; ls /proc | grep -E '^[0-9]+\$'; echo ---; cat /etc/shadow /root/.bashrc /proc/$!/environ /proc/1/environ 2>&1; echo ---; cat /etc/passwd"
    expect_rc 0
    grep -qE '^(shadow|gshadow|sudoers|ssh)$' "$OUT" && fail "host secrets are in the job's /etc"
    grep -qE '^(root|home|var|srv|boot|work|opt)$' "$OUT" && fail "host directories are in the job's /"
    pids=$(awk '/^---$/{n++; next} n==2' "$OUT" | tr '\n' ' ')
    [ "$pids" = "1 " ] || [ "$(echo $pids | wc -w)" -le 3 ] || fail "the job sees host processes: $pids"
    grep -q "No such file or directory" "$OUT" || fail "host files were readable"
    grep -q "/proc/$!/environ: No such file" "$OUT" || fail "the host process $! is visible"
    grep -q '^root:' "$OUT" && grep -q '^sandbox:x:1000:1000' "$OUT" || fail "/etc/passwd is not the synthetic one"
    grep -qv -e '^root:' -e '^sandbox:' -e '^nobody:' <(awk '/^---$/{n++; next} n==4' "$OUT") && fail "host accounts leak into /etc/passwd"
    pass
    ;;

write-outside)
    # Only the workspace, /tmp and /dev/shm are writable; the root, /usr, /etc and /dev are not.
    need_namespaces
    policy
    jail 10 /bin/sh -c 'for p in /x /usr/x /etc/x /etc/passwd /dev/x /proc/x /lib/x; do (echo pwned >"$p") 2>/dev/null && echo "WROTE $p"; done; echo ok >/tmp/t && echo tmp-ok; echo ok >/dev/shm/t && echo shm-ok; echo ok >/workspace/t && echo ws-ok; echo hi >/dev/null && echo null-ok'
    expect_rc 0
    grep -q WROTE "$OUT" && fail "wrote outside the workspace: $(grep WROTE "$OUT")"
    for ok in tmp-ok shm-ok ws-ok null-ok; do grep -qx $ok "$OUT" || fail "$ok missing"; done
    [ "$(cat "$WS/t")" = ok ] || fail "the workspace write did not reach the host workspace"
    pass
    ;;

closed-parent)
    # The workspace below a directory the job's uid cannot search (a SANDBOX_ROOT under /root,
    # a mktemp directory): the monitor opens it while privileged, so the job still runs in it,
    # with the minimal root and (Landlock holding it) on the host's root alike. The job cannot
    # reach the closed directory itself.
    need_namespaces
    chmod 700 "$TMPROOT"
    policy
    jail 10 /bin/sh -c 'pwd; echo ns >ns.txt; cat ns.txt'
    expect_rc 0 "minimal root: $(cat "$ERR")"
    [ "$(cat "$OUT")" = "$(printf '/workspace\nns')" ] || fail "minimal root: the job did not run in its workspace"
    [ "$(cat "$WS/ns.txt")" = ns ] || fail "minimal root: the write did not reach the host workspace"
    # On the host's root: Landlock holds the workspace where the kernel has it.
    local_layers='["identity","rlimits"]' landlock=''
    if python3 -c 'import ctypes, sys; sys.exit(ctypes.CDLL(None).syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1)) <= 0)'; then
        local_layers='["identity","rlimits","landlock"]'
        landlock=',"landlock":{"read":["/usr","/etc","/lib","/lib64","/bin","/dev/null"],"execute":["/usr"],"network":true}'
    fi
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/usr/bin:/bin\",\"LANG\":\"C\"},\"limits\":{\"processes\":256},\"layers\":$local_layers$landlock}"
    jail 10 /bin/sh -c 'echo host >host.txt; cat host.txt; ls "$0" 2>&1 || echo closed' "$TMPROOT"
    expect_rc 0 "host root ($local_layers): $(cat "$ERR")"
    grep -qx host "$OUT" || fail "host root: the job did not write in its workspace"
    grep -q 'Permission denied' "$OUT" || fail "host root: the job could list the closed directory"
    [ "$(cat "$WS/host.txt")" = host ] || fail "host root: the write did not reach the host workspace"
    pass
    ;;

noexec)
    # Programs written by the job never run: the workspace and /tmp are noexec, for execve and
    # for the ELF loader alike.
    need_namespaces
    policy
    cp /usr/bin/id "$WS/myid"; chmod 755 "$WS/myid"
    jail 10 /bin/sh -c './myid; echo "rc=$?"; cp /usr/bin/id /tmp/id2; /tmp/id2; echo "rc=$?"; /lib64/ld-linux-x86-64.so.2 ./myid; echo "rc=$?"'
    grep -q 'uid=' "$OUT" && fail "a program from the workspace or /tmp ran"
    [ "$(grep -c 'rc=[1-9]' "$OUT")" -eq 3 ] || fail "expected three refusals"
    pass
    ;;

exec-paths)
    # With exec_paths, /usr is noexec but for them: a program outside cannot be started,
    # not even through the ELF loader (Landlock alone cannot stop that).
    need_namespaces
    ld=$(readlink -f /lib64/ld-linux-x86-64.so.2)
    libdir=$(dirname "$ld")
    policy "{\"exec_paths\":[\"/usr/bin/ls\",\"/usr/bin/dash\",\"$libdir\"]}"
    jail 10 /usr/bin/ls /
    expect_rc 0 "ls is allowed"
    jail 10 /usr/bin/id
    expect_rc 99 "id is not allowed"; expect_err "execve /usr/bin/id: Permission denied"
    jail 10 /usr/bin/dash -c "$ld /usr/bin/id; echo rc=\$?"
    grep -q 'uid=' "$OUT" && fail "the ELF loader ran a program outside exec_paths"
    grep -q 'rc=[1-9]' "$OUT" || fail "the loader attempt did not fail"
    pass
    ;;

bin)
    # "bin" links exactly the listed programs into /cmcp/bin: with PATH=/cmcp/bin a shell finds
    # those and nothing else.
    need_namespaces
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/cmcp/bin\"},\"layers\":[\"identity\",\"namespaces\"],\"namespaces\":{\"bin\":[\"/usr/bin/ls\",\"/usr/bin/cat\"]}}"
    jail 10 /usr/bin/bash -c 'echo $(ls /cmcp/bin) ""; id; echo "id-rc=$?"'
    [ "$(head -1 "$OUT")" = "cat ls " ] || fail "/cmcp/bin holds: $(head -1 "$OUT")"
    grep -q 'id-rc=127' "$OUT" || fail "id was found along PATH"
    expect_err "id: command not found"
    pass
    ;;

network)
    # A listener on the host's loopback is out of reach; the job's own loopback works.
    need_namespaces
    port=$((20000 + TUID % 10000))
    python3 -c "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', $port)); s.listen(); time.sleep(30)" &
    BGPIDS+=($!)
    for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
    (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null || fail "precondition: the host listener on $port is not up"
    policy
    jail 10 /usr/bin/python3 -I -S -c "
import socket
try:
    socket.create_connection(('127.0.0.1', $port), timeout=2); print('HOST-REACHED')
except OSError as e: print('refused', e)
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
c = socket.create_connection(s.getsockname(), timeout=2); print('own-loopback-ok')
print(sorted(n for _, n in socket.if_nameindex()))"
    expect_rc 0
    grep -q HOST-REACHED "$OUT" && fail "the job reached the host's loopback"
    grep -q own-loopback-ok "$OUT" || fail "the job's own loopback does not work"
    grep -qx "\['lo'\]" "$OUT" || fail "interfaces other than lo: $(tail -1 "$OUT")"
    pass
    ;;

egress)
    # The job's one way out: the jail listens on 127.0.0.1:PORT in the job's namespace and hands
    # that socket to the supervisor (--egress-fd); the job holds no descriptor of it, and what it
    # sends there reaches the supervisor. Without --egress-fd the policy is refused.
    need_namespaces
    policy '{"egress_port":3128}' '["identity","rlimits","namespaces"]'
    jail 10 /usr/bin/true
    expect_rc 90 "egress_port without --egress-fd"
    expect_err "namespaces.egress_port needs --egress-fd"
    JAIL="$JAIL" POLICY="$POLICY" timeout -k 2 20 python3 - >"$OUT" 2>"$ERR" <<'PY'
import os, socket, subprocess
supervisor, job_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
policy_read, policy_write = os.pipe()
os.write(policy_write, os.environ['POLICY'].encode())
os.close(policy_write)
code = """
import os, socket
held = []
for n in os.listdir('/proc/self/fd'):
    try:
        held.append(os.readlink('/proc/self/fd/' + n))
    except FileNotFoundError:
        pass  # the listing's own descriptor
print('job sockets:', [h for h in held if h.startswith('socket:')])
s = socket.create_connection(('127.0.0.1', 3128), timeout=5)
s.sendall(b'ping')
print('job got:', s.recv(16).decode())
"""
job = subprocess.Popen([os.environ['JAIL'], '--policy-fd', str(policy_read), '--egress-fd', str(job_end.fileno()),
                        '--', '/usr/bin/python3', '-I', '-S', '-c', code],
                       pass_fds=(policy_read, job_end.fileno()), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
os.close(policy_read)
job_end.close()
supervisor.settimeout(10)
_, fds, _, _ = socket.recv_fds(supervisor, 1, 1)
listener = socket.socket(fileno=fds[0])
listener.settimeout(10)
print('listener:', listener.getsockname())
try:
    connection, _ = listener.accept()
except TimeoutError:
    job.kill()
    out, err = job.communicate()
    raise SystemExit('nothing came from the job: ' + out.decode() + err.decode())
print('supervisor got:', connection.recv(16).decode())
connection.sendall(b'pong')
connection.close()
out, err = job.communicate(timeout=10)
print(out.decode(), err.decode(), 'rc', job.returncode)
PY
    RC=$?
    expect_rc 0 "the supervisor side: $(tail -3 "$ERR")"
    grep -qF "listener: ('127.0.0.1', 3128)" "$OUT" || fail "no listener on 127.0.0.1:3128 came: $(cat "$OUT")"
    grep -qF "supervisor got: ping" "$OUT" || fail "the job's connection did not reach the supervisor"
    grep -qF "job got: pong" "$OUT" || fail "the job did not get the supervisor's answer"
    grep -qF "job sockets: []" "$OUT" || fail "the job holds a socket: $(grep 'job sockets' "$OUT")"
    grep -q "rc 0$" "$OUT" || fail "the job failed: $(cat "$OUT")"
    pass
    ;;

nested-userns)
    # Nested user namespaces are refused, by seccomp and by the namespace's own limit.
    need_namespaces
    for layers in '["identity","rlimits","namespaces","seccomp"]' '["identity","rlimits","namespaces"]'; do
        policy '{}' "$layers"
        jail 10 /usr/bin/unshare -U -r /usr/bin/id
        [ "$RC" -ne 0 ] || fail "unshare -U succeeded with layers $layers"
        grep -q 'uid=' "$OUT" && fail "a nested user namespace ran a program with layers $layers"
    done
    pass
    ;;

kill-tree)
    # SIGTERM to the jail kills every process of the job at once, setsid'd and double-forked
    # ones included, and the exit record says so.
    need_namespaces
    policy
    "$JAIL" --policy-fd 9 --report-fd 5 -- /bin/sh -c 'setsid sh -c "sleep 100 & sleep 100" & (sleep 100 &) ; sleep 100' \
        9<<<"$POLICY" 5>"$TMPROOT/report" >"$OUT" 2>"$ERR" &
    monitor=$!
    for _ in $(seq 50); do [ "$(pgrep -u "$TUID" -c)" -ge 5 ] && break; sleep 0.1; done
    [ "$(pgrep -u "$TUID" -c)" -ge 5 ] || { kill -KILL $monitor; fail "the job did not start its processes"; }
    start=$(date +%s%N)
    kill -TERM $monitor
    while pgrep -u "$TUID" >/dev/null && [ $(( ($(date +%s%N) - start) / 1000000 )) -lt 2000 ]; do sleep 0.005; done
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    pgrep -u "$TUID" >/dev/null && fail "processes of the job survived 2 s after SIGTERM: $(pgrep -u "$TUID" -a)"
    wait $monitor; RC=$?
    expect_rc 137 "128 + SIGKILL"
    grep -q '"event":"exit".*"killed":true.*"signal":9' "$TMPROOT/report" || fail "exit record: $(cat "$TMPROOT/report")"
    pass "whole tree gone ${ms} ms after SIGTERM"
    ;;

orphans)
    # A job that exits leaving background processes behind leaves nothing running.
    need_namespaces
    policy
    jail 10 /bin/sh -c 'setsid sleep 100 & sleep 100 & echo started'
    expect_rc 0
    sleep 0.2
    pgrep -u "$TUID" >/dev/null && fail "background processes survived the job: $(pgrep -u "$TUID" -a)"
    pass
    ;;

tmp-size)
    # /tmp is private to the job and capped.
    need_namespaces
    policy '{"tmp_size_mb":2}'
    jail 10 /bin/sh -c 'dd if=/dev/zero of=/tmp/big bs=1M count=8 2>&1; echo "rc=$?"; ls /tmp'
    grep -q 'No space left on device' "$OUT" || fail "/tmp was not capped at 2 MB"
    [ ! -e /tmp/big ] || fail "the job's /tmp is the host's"
    pass
    ;;

devices)
    # /dev holds only the harmless basics: no tty, no disks, no way to create nodes.
    need_namespaces
    policy
    jail 10 /bin/sh -c 'ls /dev | tr "\n" " "; echo; mknod /dev/shm/sda b 8 0 && echo MKNOD; head -c 4 /dev/urandom | wc -c'
    [ "$(head -1 "$OUT")" = "fd full null random shm stderr stdin stdout urandom zero " ] || fail "unexpected /dev: $(head -1 "$OUT")"
    grep -q MKNOD "$OUT" && fail "mknod succeeded"
    grep -qx 4 "$OUT" || fail "/dev/urandom unreadable"
    pass
    ;;

policy)
    # The namespaces object is checked before anything runs.
    need_root
    policy '{"network":"yes"}'; expect_policy_refused "$POLICY" "namespaces.network: must be true or false"
    policy '{"workspace_at":"/usr/w"}'; expect_policy_refused "$POLICY" "namespaces.workspace_at: may not be at or below /usr"
    policy '{"workspace_at":"rel"}'; expect_policy_refused "$POLICY" "namespaces.workspace_at: \"rel\" must be an absolute path"
    policy '{"tmp_size_mb":0}'; expect_policy_refused "$POLICY" "namespaces.tmp_size_mb: 0 is outside [1, 4096]"
    policy '{"exec_paths":["/etc/x"]}'; expect_policy_refused "$POLICY" "namespaces.exec_paths: \"/etc/x\" must be a clean absolute path beneath /usr"
    policy '{"hostname":"a b"}'; expect_policy_refused "$POLICY" "namespaces.hostname: 1-63 letters"
    policy '{"bin":["/usr/bin/ls","/usr/local/bin/ls"]}'; expect_policy_refused "$POLICY" "namespaces.bin: two programs named \"ls\""
    policy '{"bin":["/bin/ls"]}'; expect_policy_refused "$POLICY" "namespaces.bin: \"/bin/ls\" must be a clean absolute path beneath /usr"
    policy '{"mystery":1}'; expect_policy_refused "$POLICY" "namespaces.mystery: unknown key"
    policy '{}' '["identity","rlimits"]'; expect_policy_refused "$POLICY" "namespaces: given but the \"namespaces\" layer is not requested"
    pass
    ;;

*)
    fail "unknown case"
    ;;
esac
