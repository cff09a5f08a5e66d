#pragma once

#include <QByteArray>

#include <cstdint>
#include <optional>

namespace cmcp::btrfs {

// The btrfs operations a workspace volume needs, as the kernel's ioctls (no btrfs-progs in the
// hot path: a snapshot is one system call, milliseconds whatever the tree's size). Each returns
// 0 or the errno of the call that failed.

// True when `fd` is on a btrfs file system.
bool isBtrfs(int fd);
// True when `fd` is the root directory of a subvolume (inode 256 on btrfs).
bool isSubvolumeRoot(int fd);
// The subvolume's id (its level-0 qgroup is 0/id); nullopt with errno on failure (root only).
std::optional<uint64_t> subvolumeId(int fd);

// Creates the empty subvolume `name` in the directory `parentFd`.
int createSubvolume(int parentFd, const QByteArray &name);
// Makes `name` in the directory `parentFd` a snapshot of the subvolume `sourceFd` (copy on
// write: nothing is copied until either side changes), read-only when asked.
int snapshot(int sourceFd, int parentFd, const QByteArray &name, bool readOnly);
// Deletes the subvolume `name` of `parentFd` with everything in it (root only); its space is
// given back by the kernel in the background.
int deleteSubvolume(int parentFd, const QByteArray &name);

// Turns on quota accounting (qgroups) for the file system of `fd`; 0 when it already is.
int enableQuota(int fd);
// Limits what the subvolume `fd` refers to, in bytes (data and metadata, shared extents
// included); 0 removes the limit.
int limitReferencedBytes(int fd, uint64_t bytes);

struct QgroupUsage
{
    uint64_t referencedBytes = 0;
    uint64_t limitBytes = 0; // 0: no limit
};
// What the subvolume `fd` refers to and its limit, as of the last committed transaction (root
// only: it searches the quota tree). nullopt with errno on failure.
std::optional<QgroupUsage> usage(int fd);

} // namespace cmcp::btrfs
