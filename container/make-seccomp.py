#!/usr/bin/env python3
"""Writes container/seccomp.json: the container engine's default seccomp profile, except that the
system calls cmcp-jail needs to build a job's namespaces are allowed without CAP_SYS_ADMIN.

    make-seccomp.py [ENGINE_DEFAULT] > container/seccomp.json

ENGINE_DEFAULT is Podman's default profile (containers-common: /usr/share/containers/seccomp.json,
the default here). Its defaults already allow unshare, clone, mount, umount2 and pivot_root; it
allows sethostname and setdomainname only with CAP_SYS_ADMIN, and cmcp-jail sets both in the
job's own UTS namespace. (Docker's default also restricts clone with namespace flags, unshare,
mount, umount2 and pivot_root to CAP_SYS_ADMIN; the same list covers it.) Granting CAP_SYS_ADMIN
to the container for that would also grant it in the container's own namespaces, so the profile
allows these calls instead: the kernel still checks the capability in the namespace the call
acts on, which for the jail is the job's new user namespace. Nothing else of the default
changes; tests/container checks that.
"""
import json
import sys

# The calls the jail's namespaces layer makes (jail/namespaces.cpp) and that the engine
# default may refuse to a container without CAP_SYS_ADMIN.
NAMESPACE_CALLS = ["clone", "clone3", "mount", "pivot_root", "setdomainname", "sethostname",
                   "umount2", "unshare"]


def derive(default):
    profile = json.loads(json.dumps(default))
    rules = []
    for rule in profile["syscalls"]:
        names = [n for n in rule["names"] if not (n in NAMESPACE_CALLS and rule["action"] != "SCMP_ACT_ALLOW")]
        if names:
            rules.append({**rule, "names": names})
    rules.append({"names": NAMESPACE_CALLS, "action": "SCMP_ACT_ALLOW", "args": [],
                  "comment": "Container-MCP: cmcp-jail builds each job's user, mount, pid, "
                             "ipc, uts and network namespaces",
                  "includes": {}, "excludes": {}})
    profile["syscalls"] = rules
    return profile


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/containers/seccomp.json"
    with open(path, encoding="utf-8") as f:
        default = json.load(f)
    json.dump(derive(default), sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
