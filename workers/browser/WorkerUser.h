#pragma once

#include <string>
#include <sys/types.h>

namespace cmcp {

// The user cmcp-browser runs as. A root daemon starts it with --uid/--gid, and the worker
// becomes that user first thing in main(), before Qt or Chromium load anything: as root
// Chromium must run with its own sandbox off (FACTS.md), and a compromised renderer would hold
// the daemon's rights. As an ordinary user the sandbox is on (namespaces and seccomp-bpf for
// the renderers) and the worker holds no right of the daemon's.
//
// The drop happens in the worker rather than in the daemon's fork because the worker's program
// may live in a directory only root can enter (a build tree under /root); its libraries and
// Chromium's helper are loaded from system directories, which every user can read.
struct WorkerUser
{
    uid_t uid = 0;
    gid_t gid = 0;
};

// Looks for "--uid N" and "--gid N" (or --uid=N) in argv; false with `error` for a malformed
// value or a uid without a gid. Sets `found` when both were given.
bool parseWorkerUser(int argc, char **argv, WorkerUser &user, bool &found, std::string &error);

// Drops every group and becomes `user` for good (real, effective and saved ids), then checks
// that root cannot be regained.
bool becomeWorkerUser(const WorkerUser &user, std::string &error);

} // namespace cmcp
