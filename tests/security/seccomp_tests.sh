#!/usr/bin/env bash
# Security tests for cmcp-jail's seccomp layer: each denied call is made from inside the jail
# with [identity, rlimits, seccomp] and, as the baseline, with [identity, rlimits] only, so no
# row passes vacuously (the call must work, or fail differently, without the filter).
#   seccomp_tests.sh <path to cmcp-jail> <case> <test uid>
# Exit 0 pass, 1 fail, 77 skip (with the reason on stdout).
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

need_seccomp() {
    need_root
    grep -q '^Seccomp:' /proc/self/status || skip "the kernel has no seccomp"
    [ -x "$PY" ] || skip "$PY is missing"
}

BASE='["identity","rlimits"]'
SECC='["identity","rlimits","seccomp"]'
# policy LAYERS [extra-json-members]
policy() {
    POLICY="{\"uid\":$TUID,\"gid\":$TGID,\"workspace\":\"$WS\",\"env\":{\"PATH\":\"/usr/bin:/bin\",\"LANG\":\"C\"},\"limits\":{\"processes\":64},\"layers\":$1${2:-}}"
}

# The probe: each name makes one call and prints "NAME ok VALUE", "NAME errno ENAME" or (for
# calls made in a child) "NAME signal N".
cat >"$TMPROOT/probe.py" <<'PYEOF'
import ctypes, errno, mmap, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(a) for a in args])
    return ("ok", r) if r >= 0 else ("errno", errno.errorcode.get(ctypes.get_errno(), "?"))
def in_child(fn):
    # Runs fn in a forked child: reports its exit code or its killing signal.
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(fn())
        finally:
            os._exit(120)
    _, st = os.waitpid(pid, 0)
    return ("signal", os.WTERMSIG(st)) if os.WIFSIGNALED(st) else ("ok", os.WEXITSTATUS(st))
CLONE = {"NEWNS": 0x20000, "NEWCGROUP": 0x02000000, "NEWUTS": 0x04000000,
         "NEWIPC": 0x08000000, "NEWUSER": 0x10000000, "NEWPID": 0x20000000,
         "NEWNET": 0x40000000}
def clone(flags):
    r = libc.syscall(ctypes.c_long(56), ctypes.c_ulong(flags | 17), ctypes.c_ulong(0),
                     ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
    if r == 0:
        os._exit(0)
    if r < 0:
        return ("errno", errno.errorcode.get(ctypes.get_errno(), "?"))
    os.waitpid(r, 0)
    return ("ok", "child")
def int80_getpid():
    # A 64-bit process entering the i386 syscall table: mov eax, 20 (getpid); int 0x80; ret
    code = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
    return 0 if f() == os.getpid() else 3
AT_FDCWD = (1 << 64) - 100
_names = []
def path(name):
    buffer = ctypes.create_string_buffer(name)
    _names.append(buffer)
    return ctypes.addressof(buffer)
def own(name):
    os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644))
def sock(family):
    try:
        socket.socket(family, socket.SOCK_STREAM).close()
        return ("ok", 0)
    except OSError as e:
        return ("errno", errno.errorcode.get(e.errno, "?"))
probes = {
    "ptrace": lambda: sc(101, 0, 0, 0, 0),                     # PTRACE_TRACEME
    "inet": lambda: sock(socket.AF_INET),
    "inet6": lambda: sock(socket.AF_INET6),
    "netlink": lambda: sc(41, 16, 3, 0),                       # AF_NETLINK, SOCK_RAW
    "unix": lambda: sock(socket.AF_UNIX),
    # Mount family, with arguments the kernel refuses (EFAULT/EINVAL) before its permission
    # check, so that without the filter the errno differs from the filter's EPERM.
    "mount": lambda: sc(165, 0, 0, 1, 0, 0),                   # bad type pointer: EFAULT
    "umount2": lambda: sc(166, 0, 0xffff),                      # bad flags: EINVAL
    "setns": lambda: sc(308, 0xffffffff, 0),                   # fd -1: EBADF
    "open_tree": lambda: sc(428, 0, 0, 0xffffffff),            # bad flags: EINVAL
    "mount_setattr": lambda: sc(442, 0, 0, 0xffffffff, 0, 0),  # bad flags: EINVAL
    "bpf": lambda: sc(321, 0, 0, 1 << 20),                     # size > PAGE_SIZE: E2BIG
    "io_uring_setup": lambda: sc(425, 1, ctypes.addressof(ctypes.create_string_buffer(120))),
    "userfaultfd": lambda: sc(323, 1),                         # UFFD_USER_MODE_ONLY
    "keyctl": lambda: sc(250, 0, 0xfffffffd, 1),               # GET_KEYRING_ID session, create
    "request_key": lambda: sc(249, ctypes.addressof(ctypes.create_string_buffer(b"user")),
                              ctypes.addressof(ctypes.create_string_buffer(b"cmcp:none")), 0, 0),
    "perf_event_open": lambda: sc(298, 0, 0, 0xffffffff, 0xffffffff, 0),  # EFAULT
    "process_vm_readv": lambda: sc(310, os.getpid(), 0, 0, 0, 0, 1),       # bad flags: EINVAL
    "clone3": lambda: sc(435, 0, 0),                           # size 0: EINVAL
    # The set-user-ID bit in a mode, on a file of the job's own (made first): chmod, fchmodat,
    # fchmodat2 and creating a file with it; a mode without it is the control.
    "chmod_plain": lambda: (own(b"plain"), sc(90, path(b"plain"), 0o755))[1],
    "chmod_suid": lambda: (own(b"c1"), sc(90, path(b"c1"), 0o4755))[1],
    "fchmodat_suid": lambda: (own(b"c2"), sc(268, AT_FDCWD, path(b"c2"), 0o4755))[1],
    "fchmodat2_suid": lambda: (own(b"c3"), sc(452, AT_FDCWD, path(b"c3"), 0o4755, 0))[1],
    "openat_suid": lambda: sc(257, AT_FDCWD, path(b"c4"), os.O_CREAT | os.O_WRONLY, 0o4755),
    "creat_suid": lambda: sc(85, path(b"c5"), 0o4755),
    "openat2": lambda: sc(437, AT_FDCWD, path(b"."), ctypes.addressof(ctypes.create_string_buffer(24)), 24),
    "int80": lambda: in_child(int80_getpid),
    "x32": lambda: in_child(lambda: 0 if sc(0x40000000 | 39)[0] in ("ok", "errno") else 3),
}
for f in CLONE:
    probes["clone_" + f] = (lambda v: lambda: clone(v))(CLONE[f])
    probes["clone_USER_" + f] = (lambda v: lambda: clone(v | CLONE["NEWUSER"]))(CLONE[f])
for name in sys.argv[1:]:
    r = probes[name]()
    print(name, r[0], r[1], flush=True)
PYEOF
chmod 644 "$TMPROOT/probe.py"

# probe LAYERS NAME...: runs the probe in the jail; results in $OUT, one "NAME kind value" line.
probe() {
    local layers=$1; shift
    policy "$layers"
    jail 20 "$PY" -I -S "$TMPROOT/probe.py" "$@"
    expect_rc 0 "probe $* with $layers"
}
result() { sed -n "s/^$1 //p" "$OUT"; }
# jail_reporting SECS CMD...: like jail, with the jail's --report-fd records in $REPORT.
REPORT=$TMPROOT/report
jail_reporting() {
    local secs=$1; shift
    timeout -k 2 "$secs" "$JAIL" --policy-fd 9 --report-fd 8 -- "$@" 9<<<"$POLICY" 8>"$REPORT" >"$OUT" 2>"$ERR"
    RC=$?
}

# deny_rows EXPECTED NAME...: each call must give EXPECTED under seccomp and something else
# (success or another errno) without it.
deny_rows() {
    local want=$1; shift
    probe "$BASE" "$@"; cp "$OUT" "$TMPROOT/base"
    probe "$SECC" "$@"; cp "$OUT" "$TMPROOT/secc"
    local n got base summary=""
    for n in "$@"; do
        base=$(sed -n "s/^$n //p" "$TMPROOT/base")
        got=$(sed -n "s/^$n //p" "$TMPROOT/secc")
        [ "$got" = "$want" ] || fail "$n under seccomp: '$got', expected '$want'"
        [ -n "$base" ] && [ "$base" != "$want" ] || fail "$n without seccomp: '$base' (vacuous: same as with the filter)"
        summary+="$n[$base -> $got] "
    done
    pass "$summary"
}

case "$CASE" in

status)
    need_seccomp
    policy "$BASE"; jail 10 /usr/bin/cat /proc/self/status; expect_rc 0
    [ "$(sed -n 's/^Seccomp:[[:space:]]*//p' "$OUT")" = 0 ] || fail "baseline already has a filter"
    policy "$SECC"; jail 10 /usr/bin/cat /proc/self/status; expect_rc 0
    [ "$(sed -n 's/^Seccomp:[[:space:]]*//p' "$OUT")" = 2 ] || fail "Seccomp is not 2 (filter mode)"
    n=$(sed -n 's/^Seccomp_filters:[[:space:]]*//p' "$OUT")
    [ "${n:-0}" -ge 1 ] || fail "Seccomp_filters is ${n:-missing}"
    [ "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' "$OUT")" = 1 ] || fail "NoNewPrivs is not 1"
    pass "Seccomp: 2, Seccomp_filters: $n"
    ;;

unshare)
    need_seccomp
    for args in "-U true" "-r true"; do
        policy "$BASE"; jail 10 /usr/bin/unshare $args
        [ "$RC" -eq 0 ] || skip "unshare $args fails without seccomp too (rc $RC: $(cat "$ERR")): unprivileged user namespaces are off"
        policy "$SECC"; jail 10 /usr/bin/unshare $args
        [ "$RC" -ne 0 ] || fail "unshare $args succeeded under seccomp"
        grep -q "Operation not permitted" "$ERR" || fail "unshare $args: not EPERM"
    done
    pass "unshare -U / -r: work without the filter, EPERM with it"
    ;;

ptrace) need_seccomp; deny_rows "errno EPERM" ptrace process_vm_readv ;;
# move_mount, pivot_root, fsopen, fspick check CAP_SYS_ADMIN before their arguments: EPERM
# either way, so they are not rows here (the filter denies them all the same).
mount) need_seccomp; deny_rows "errno EPERM" mount umount2 open_tree mount_setattr setns ;;
bpf) need_seccomp; deny_rows "errno EPERM" bpf perf_event_open ;;
io_uring) need_seccomp; deny_rows "errno EPERM" io_uring_setup ;;
userfaultfd) need_seccomp; deny_rows "errno EPERM" userfaultfd ;;
keyctl) need_seccomp; deny_rows "errno EPERM" keyctl request_key ;;
clone3) need_seccomp; deny_rows "errno ENOSYS" clone3 openat2 ;;
setuid)
    # A job owns its workspace's files on disk as the workspace uid: no set-user-ID file of it.
    need_seccomp
    probe "$SECC" chmod_plain
    [ "$(result chmod_plain)" = "ok 0" ] || fail "chmod 755 under seccomp: $(result chmod_plain)"
    deny_rows "errno EPERM" chmod_suid fchmodat_suid fchmodat2_suid openat_suid creat_suid
    ;;
socket) need_seccomp; deny_rows "errno EAFNOSUPPORT" inet inet6 netlink ;;

clone-newuser)
    need_seccomp
    names=()
    for f in NEWNS NEWCGROUP NEWUTS NEWIPC NEWUSER NEWPID NEWNET; do names+=("clone_USER_$f"); done
    probe "$BASE" "${names[@]}"
    for n in "${names[@]}"; do
        [ "$(result "$n")" = "ok child" ] || skip "$n fails without seccomp too ($(result "$n")): unprivileged user namespaces are off"
    done
    for f in NEWNS NEWCGROUP NEWUTS NEWIPC NEWPID NEWNET; do names+=("clone_$f"); done
    probe "$SECC" "${names[@]}"
    for n in "${names[@]}"; do
        [ "$(result "$n")" = "errno EPERM" ] || fail "$n under seccomp: $(result "$n")"
    done
    pass "clone(CLONE_NEWUSER|CLONE_NEW*) creates children without the filter, EPERM with it (13 flag sets)"
    ;;

unix)
    need_seccomp
    probe "$SECC" unix
    [ "$(result unix)" = "ok 0" ] || fail "AF_UNIX socket under seccomp: $(result unix)"
    policy "$SECC" ',"seccomp":{"network":true}'
    jail 20 "$PY" -I -S "$TMPROOT/probe.py" inet unix
    expect_rc 0
    [ "$(result inet)" = "ok 0" ] && [ "$(result unix)" = "ok 0" ] || fail "network:true still blocks sockets"
    pass "AF_UNIX allowed with network off; AF_INET allowed with network on"
    ;;

int80)
    need_seccomp
    probe "$BASE" int80 x32; cp "$OUT" "$TMPROOT/base"
    [ "$(result int80)" = "ok 0" ] || skip "int 0x80 getpid does not work without seccomp ($(result int80)): no IA32 emulation"
    [ "$(result x32)" = "ok 0" ] || fail "x32 baseline: $(result x32)"
    probe "$SECC" int80 x32
    [ "$(result int80)" = "signal 31" ] || fail "int 0x80 under seccomp: $(result int80), expected SIGSYS"
    [ "$(result x32)" = "signal 31" ] || fail "x32 syscall under seccomp: $(result x32), expected SIGSYS"
    pass "i386 (int 0x80) and x32 syscalls: answered without the filter, process killed by SIGSYS with it"
    ;;

ordinary)
    need_seccomp
    policy "$SECC"
    jail 20 /usr/bin/sh -c 'echo ok; ls / >/dev/null && echo ls-ok; cat /etc/hostname >/dev/null && echo cat-ok; /usr/bin/true && echo exec-ok; (echo sub) | cat'
    expect_rc 0
    [ "$(tr '\n' ' ' <"$OUT")" = "ok ls-ok cat-ok exec-ok sub " ] || fail "shell work: $(tr '\n' ' ' <"$OUT")"
    jail 20 "$PY" -c 'print(1)'
    expect_rc 0; [ "$(cat "$OUT")" = 1 ] || fail "python3 -c print(1)"
    # Threads (glibc tries clone3 first and falls back to clone on ENOSYS) and subprocesses.
    jail 20 "$PY" -c 'import threading, subprocess
r = []
t = threading.Thread(target=lambda: r.append(2)); t.start(); t.join()
print(r[0], subprocess.run(["/usr/bin/echo", "3"], capture_output=True, text=True).stdout.strip())'
    expect_rc 0; [ "$(cat "$OUT")" = "2 3" ] || fail "python threads/subprocess"
    pass "sh, ls, cat, fork/exec, python3, threads, subprocess"
    ;;

counts)
    # The monitor counts each denied call by name in its exit record; the job still gets the
    # filter's errno. clone3 is not counted (libc's fallback cue), a clean job reports [].
    need_seccomp
    policy "$SECC"
    jail_reporting 20 "$PY" -I -S "$TMPROOT/probe.py" ptrace ptrace ptrace keyctl keyctl mount inet clone3 unix
    expect_rc 0 "probe with --report-fd"
    [ "$(grep -c '^ptrace errno EPERM$' "$OUT")" = 3 ] || fail "ptrace did not fail with EPERM 3 times: $(cat "$OUT")"
    [ "$(grep -c '^keyctl errno EPERM$' "$OUT")" = 2 ] || fail "keyctl: $(cat "$OUT")"
    [ "$(result mount)" = "errno EPERM" ] && [ "$(result inet)" = "errno EAFNOSUPPORT" ] \
        && [ "$(result clone3)" = "errno ENOSYS" ] && [ "$(result unix)" = "ok 0" ] || fail "errnos: $(cat "$OUT")"
    got=$("$PY" -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if "\"exit\"" in l][0]
print(" ".join("%s:%s:%d" % (d["syscall"], d["errno"], d["count"]) for d in sorted(r["seccomp_denied"], key=lambda d: d["syscall"])))' "$REPORT") \
        || fail "no seccomp_denied in the exit record: $(cat "$REPORT")"
    [ "$got" = "keyctl:EPERM:2 mount:EPERM:1 ptrace:EPERM:3 socket:EAFNOSUPPORT:1" ] || fail "seccomp_denied: '$got'"
    jail_reporting 20 "$PY" -c 'import threading, subprocess
t = threading.Thread(target=print); t.start(); t.join(); subprocess.run(["/usr/bin/true"])'
    expect_rc 0 "clean job"
    grep -q '"seccomp_denied":\[\]' "$REPORT" || fail "a job denied nothing: $(cat "$REPORT")"
    pass "counted: $got; a threaded, spawning job: seccomp_denied []"
    ;;

nested)
    # A job's own filter stacks below the jail's: where it denies a call itself its errno
    # wins and the jail counts nothing; a listener of its own is refused (EBUSY); the jail's
    # denials are still answered and counted.
    need_seccomp
    policy "$SECC"
    jail_reporting 20 "$PY" -I -S -c '
import ctypes, errno, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def load(code, flags):
    insns = b"".join(struct.pack("=HBBI", *i) for i in code)
    buf = ctypes.create_string_buffer(insns)
    prog = struct.pack("=HxxxxxxQ", len(code), ctypes.addressof(buf))
    pbuf = ctypes.create_string_buffer(prog)
    r = libc.syscall(ctypes.c_long(317), ctypes.c_ulong(1), ctypes.c_ulong(flags), ctypes.c_void_p(ctypes.addressof(pbuf)))
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
allow = [(0x06, 0, 0, 0x7fff0000)]
print("listener", load(allow, 8))  # SECCOMP_FILTER_FLAG_NEW_LISTENER
# ptrace: EACCES from the job'"'"'s own filter; everything else allowed by it
print("own", load([(0x20, 0, 0, 0), (0x15, 0, 1, 101), (0x06, 0, 0, 0x00050000 | 13), (0x06, 0, 0, 0x7fff0000)], 0))
def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(x) for x in a])
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
print("ptrace", sc(101, 0, 0, 0, 0))
print("keyctl", sc(250, 0, 0xfffffffd, 1))
'
    expect_rc 0 "nested filters"
    [ "$(tr '\n' ' ' <"$OUT")" = "listener EBUSY own ok ptrace EACCES keyctl EPERM " ] || fail "job saw: $(tr '\n' ' ' <"$OUT")"
    grep -q '"seccomp_denied":\[{"count":1,"errno":"EPERM","syscall":"keyctl"}\]' "$REPORT" || fail "report: $(cat "$REPORT")"
    pass "own listener EBUSY; own filter's EACCES for ptrace wins, uncounted; jail's keyctl EPERM counted once"
    ;;

flood)
    # Denied calls from 4 threads and a forked child at once, while the jail is asked to stop
    # nothing: every one is answered (none hangs) and counted exactly.
    need_seccomp
    policy "$SECC"
    jail_reporting 30 "$PY" -I -S -c '
import ctypes, errno, os, threading
libc = ctypes.CDLL(None, use_errno=True)
def hammer(n):
    for _ in range(n):
        assert libc.syscall(ctypes.c_long(101), 0, 0, 0, 0) == -1 and ctypes.get_errno() == errno.EPERM
pid = os.fork()
if pid == 0:
    hammer(1000); os._exit(0)
ts = [threading.Thread(target=hammer, args=(1000,)) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(os.waitpid(pid, 0)[1])
'
    expect_rc 0 "flood"
    [ "$(cat "$OUT")" = 0 ] || fail "child: $(cat "$OUT")"
    grep -q '"seccomp_denied":\[{"count":5000,"errno":"EPERM","syscall":"ptrace"}\]' "$REPORT" || fail "report: $(cat "$REPORT")"
    pass "5000 ptrace calls from 4 threads and a child: all EPERM, counted 5000"
    ;;

policy)
    need_seccomp
    mark=$TMPROOT/marker
    chmod 1777 "$TMPROOT"
    refused() { policy "$1" "$2"; expect_policy_refused "$POLICY" "$3"; }
    refused "$SECC" ',"seccomp":{"network":1}' 'seccomp.network: must be true or false'
    refused "$SECC" ',"seccomp":{"net":false}' 'seccomp.net: unknown key'
    refused "$SECC" ',"seccomp":[]' 'seccomp: must be an object'
    refused "$SECC" ',"seccomp":{"network":false,"network":true}' 'network: duplicate key'
    refused "$BASE" ',"seccomp":{}' 'seccomp: given but the "seccomp" layer is not requested'
    policy "$SECC" ',"seccomp":{}'; jail 10 /usr/bin/touch "$mark"; expect_rc 0
    [ -e "$mark" ] || fail "a valid seccomp policy did not run the job"
    pass
    ;;

*)
    echo "unknown case $CASE"; exit 1 ;;
esac
