#pragma once

#include "posix/UniqueFd.h"

#include <sys/types.h>

#include <string>

namespace cmcp {

// Idmapped mounts (mount_setattr with MOUNT_ATTR_IDMAP): a view of a directory in which what
// one uid owns on disk shows as owned by another, and what is created through the view is
// stored with the on-disk uid. Making one takes CAP_SYS_ADMIN where the file system was mounted
// (root on the host); attaching one (move_mount) only CAP_SYS_ADMIN in the mount namespace it
// goes into, so a job builds its minimal root with a view root made for it.

// A user namespace that maps exactly `diskUid` to `shownUid` and `diskGid` to `shownGid`, held
// by its descriptor (an idmapping for cloneIdmappedTree). The short-lived process that made it
// is gone when this returns. Invalid, with `error`, when the kernel refuses a step.
UniqueFd makeIdmapNamespace(uid_t diskUid, uid_t shownUid, gid_t diskGid, gid_t shownGid,
                            std::string &error);

// A detached copy of the directory `directoryFd` (its mount, without the mounts below it),
// idmapped through the user namespace `idmapNamespace`, read-write, nosuid, nodev and noexec.
// It belongs to no mount namespace until someone attaches it (move_mount with
// MOVE_MOUNT_F_EMPTY_PATH); closing the descriptor unattached drops it. Invalid, with `error`
// (EINVAL: the file system cannot be idmapped), when the kernel refuses.
UniqueFd cloneIdmappedTree(int directoryFd, int idmapNamespace, std::string &error);

} // namespace cmcp
