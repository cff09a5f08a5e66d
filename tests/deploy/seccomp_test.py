#!/usr/bin/env python3
"""container/seccomp.json: the engine's default seccomp profile with namespace creation allowed,
and nothing else more. Checks that the calls cmcp-jail needs are allowed without a capability,
that the calls the default keeps from a container stay refused, and, where Podman's default
profile is installed, that make-seccomp.py derives exactly the shipped file from it.
    seccomp_test.py <repository root>
"""
import json
import os
import subprocess
import sys

ROOT = sys.argv[1]
SHIPPED = os.path.join(ROOT, "container", "seccomp.json")
ENGINE_DEFAULT = "/usr/share/containers/seccomp.json"
NAMESPACE_CALLS = {"clone", "clone3", "mount", "pivot_root", "setdomainname", "sethostname",
                   "umount2", "unshare"}
# Refused to a container without capabilities by the default, and still by the shipped profile.
STILL_REFUSED = {"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
                 "open_by_handle_at", "bpf", "perf_event_open", "acct", "settimeofday",
                 "clock_settime", "iopl", "ioperm", "swapon", "swapoff", "quotactl",
                 "lookup_dcookie", "fanotify_init"}


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def allowed_without_capability(profile):
    """System calls an ALLOW rule admits with no capability and no argument condition."""
    names = set()
    for rule in profile["syscalls"]:
        if rule["action"] != "SCMP_ACT_ALLOW" or rule.get("args"):
            continue
        if rule.get("includes", {}).get("caps"):
            continue
        names.update(rule["names"])
    return names


with open(SHIPPED, encoding="utf-8") as f:
    shipped = json.load(f)

if shipped["defaultAction"] != "SCMP_ACT_ERRNO":
    fail("the default action is not SCMP_ACT_ERRNO")
allowed = allowed_without_capability(shipped)
missing = NAMESPACE_CALLS - allowed
if missing:
    fail(f"the jail's namespace calls are not allowed: {sorted(missing)}")
leaked = STILL_REFUSED & allowed
if leaked:
    fail(f"calls the engine default refuses are allowed: {sorted(leaked)}")
for rule in shipped["syscalls"]:
    if rule["action"] != "SCMP_ACT_ALLOW" and NAMESPACE_CALLS & set(rule["names"]):
        fail(f"a refusing rule still names {sorted(NAMESPACE_CALLS & set(rule['names']))}")

if not os.path.exists(ENGINE_DEFAULT):
    print(f"PASS (without {ENGINE_DEFAULT}: not compared with the engine's default)")
    sys.exit(0)
derived = subprocess.run([sys.executable, os.path.join(ROOT, "container", "make-seccomp.py"),
                          ENGINE_DEFAULT], check=True, capture_output=True, text=True).stdout
if json.loads(derived) != shipped:
    fail(f"container/seccomp.json is not make-seccomp.py's output for {ENGINE_DEFAULT}: "
         "regenerate it (container/make-seccomp.py > container/seccomp.json)")
with open(ENGINE_DEFAULT, encoding="utf-8") as f:
    engine = json.load(f)
extra = allowed - allowed_without_capability(engine)
if extra - NAMESPACE_CALLS:
    fail(f"allowed beyond the engine default and the namespace calls: {sorted(extra - NAMESPACE_CALLS)}")
print(f"PASS: the engine default plus {sorted(extra)}")
