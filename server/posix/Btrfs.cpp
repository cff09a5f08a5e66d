#include "posix/Btrfs.h"

#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstring>

namespace cmcp::btrfs {

namespace {

int result(int rc)
{
    return rc == 0 ? 0 : errno;
}

bool fitsName(const QByteArray &name, size_t capacity)
{
    return !name.isEmpty() && size_t(name.size()) < capacity && !name.contains('/');
}

} // namespace

bool isBtrfs(int fd)
{
    struct statfs info
    {
    };
    return ::fstatfs(fd, &info) == 0 && info.f_type == BTRFS_SUPER_MAGIC;
}

bool isSubvolumeRoot(int fd)
{
    struct stat status
    {
    };
    return isBtrfs(fd) && ::fstat(fd, &status) == 0 && S_ISDIR(status.st_mode)
            && status.st_ino == BTRFS_FIRST_FREE_OBJECTID;
}

std::optional<uint64_t> subvolumeId(int fd)
{
    // The tree of the subvolume that holds fd's inode (treeid 0: look it up).
    btrfs_ioctl_ino_lookup_args lookup{};
    lookup.treeid = 0;
    lookup.objectid = BTRFS_FIRST_FREE_OBJECTID;
    if (::ioctl(fd, BTRFS_IOC_INO_LOOKUP, &lookup) != 0)
        return std::nullopt;
    return lookup.treeid;
}

int createSubvolume(int parentFd, const QByteArray &name)
{
    btrfs_ioctl_vol_args args{};
    if (!fitsName(name, sizeof args.name))
        return EINVAL;
    std::memcpy(args.name, name.constData(), size_t(name.size()));
    return result(::ioctl(parentFd, BTRFS_IOC_SUBVOL_CREATE, &args));
}

int snapshot(int sourceFd, int parentFd, const QByteArray &name, bool readOnly)
{
    btrfs_ioctl_vol_args_v2 args{};
    if (!fitsName(name, sizeof args.name))
        return EINVAL;
    args.fd = sourceFd;
    args.flags = readOnly ? BTRFS_SUBVOL_RDONLY : 0;
    std::memcpy(args.name, name.constData(), size_t(name.size()));
    return result(::ioctl(parentFd, BTRFS_IOC_SNAP_CREATE_V2, &args));
}

int deleteSubvolume(int parentFd, const QByteArray &name)
{
    btrfs_ioctl_vol_args args{};
    if (!fitsName(name, sizeof args.name))
        return EINVAL;
    std::memcpy(args.name, name.constData(), size_t(name.size()));
    return result(::ioctl(parentFd, BTRFS_IOC_SNAP_DESTROY, &args));
}

int enableQuota(int fd)
{
    btrfs_ioctl_quota_ctl_args args{};
    args.cmd = BTRFS_QUOTA_CTL_ENABLE;
    const int rc = result(::ioctl(fd, BTRFS_IOC_QUOTA_CTL, &args));
    return rc == EEXIST ? 0 : rc;
}

int limitReferencedBytes(int fd, uint64_t bytes)
{
    btrfs_ioctl_qgroup_limit_args args{};
    args.qgroupid = 0; // the subvolume of fd
    args.lim.flags = BTRFS_QGROUP_LIMIT_MAX_RFER;
    args.lim.max_rfer = bytes == 0 ? uint64_t(-1) : bytes;
    return result(::ioctl(fd, BTRFS_IOC_QGROUP_LIMIT, &args));
}

std::optional<QgroupUsage> usage(int fd)
{
    const std::optional<uint64_t> id = subvolumeId(fd);
    if (!id)
        return std::nullopt;
    QgroupUsage found;
    bool seenInfo = false;
    // The quota tree holds, per qgroup 0/id, an info item (what it refers to) and a limit item.
    for (const uint32_t type :
         {uint32_t(BTRFS_QGROUP_INFO_KEY), uint32_t(BTRFS_QGROUP_LIMIT_KEY)}) {
        btrfs_ioctl_search_args args{};
        btrfs_ioctl_search_key &key = args.key;
        key.tree_id = BTRFS_QUOTA_TREE_OBJECTID;
        key.min_objectid = key.max_objectid = 0;
        key.min_type = key.max_type = type;
        key.min_offset = key.max_offset = *id;
        key.max_transid = uint64_t(-1);
        key.nr_items = 1;
        if (::ioctl(fd, BTRFS_IOC_TREE_SEARCH, &args) != 0)
            return std::nullopt;
        if (key.nr_items == 0)
            continue;
        btrfs_ioctl_search_header header{};
        std::memcpy(&header, args.buf, sizeof header);
        const char *item = args.buf + sizeof header;
        if (type == BTRFS_QGROUP_INFO_KEY && header.len >= sizeof(btrfs_qgroup_info_item)) {
            btrfs_qgroup_info_item info{};
            std::memcpy(&info, item, sizeof info);
            found.referencedBytes = le64toh(info.rfer);
            seenInfo = true;
        } else if (type == BTRFS_QGROUP_LIMIT_KEY
                   && header.len >= sizeof(btrfs_qgroup_limit_item)) {
            btrfs_qgroup_limit_item limit{};
            std::memcpy(&limit, item, sizeof limit);
            if (le64toh(limit.flags) & BTRFS_QGROUP_LIMIT_MAX_RFER)
                found.limitBytes = le64toh(limit.max_rfer);
        }
    }
    if (!seenInfo) {
        errno = ENOENT;
        return std::nullopt;
    }
    return found;
}

} // namespace cmcp::btrfs
