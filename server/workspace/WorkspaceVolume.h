#pragma once

#include <QString>

namespace cmcp {

class Settings;

// The file system that holds the workspaces when they have a quota (SANDBOX_WORKSPACE_QUOTA_MB >
// 0, the default): a btrfs image, <SANDBOX_ROOT>/workspaces.btrfs (sparse,
// SANDBOX_WORKSPACE_VOLUME_GB at most), loop mounted nosuid,nodev on <SANDBOX_ROOT>/volume. Each
// workspace is a subvolume of it, and its qgroup limit is the quota: the kernel refuses a write
// past it with EDQUOT, whatever wrote.
//
// The image is made on first start (mkfs.btrfs on a temporary name, renamed once complete, so
// a start that died half-way leaves nothing that looks usable) and mounted when it is not yet;
// a volume already mounted there (a previous run that was killed) is used as it is.
//
// It needs root, /dev/loop-control, btrfs in the kernel and mkfs.btrfs: without them the
// workspaces stay plain directories and state() says why, for the start-up table and /health.
class WorkspaceVolume
{
public:
    enum class State { Off, Available, Unavailable };

    WorkspaceVolume(const WorkspaceVolume &) = delete;
    WorkspaceVolume &operator=(const WorkspaceVolume &) = delete;
    WorkspaceVolume(WorkspaceVolume &&other) noexcept;
    WorkspaceVolume &operator=(WorkspaceVolume &&) = delete;
    // Unmounts the volume if this object mounted it (lazily: a job still running keeps it).
    ~WorkspaceVolume();

    // Makes and mounts the volume as the settings ask. Never fails the start: a volume that
    // cannot be had is State::Unavailable with the reason.
    static WorkspaceVolume prepare(const Settings &settings);

    // <SANDBOX_ROOT>/volume, whether or not a volume is mounted there.
    static QString mountPathFor(const Settings &settings);
    // True when a btrfs file system is mounted on `path` (not just the directory beneath).
    static bool isMountedAt(const QString &path);

    State state() const { return m_state; }
    // Why Unavailable, why Off ("SANDBOX_WORKSPACE_QUOTA_MB=0"); empty when Available.
    const QString &reason() const { return m_reason; }
    // What is in use when Available: "btrfs qgroups, 1024 MB per workspace, on ...".
    const QString &detail() const { return m_detail; }
    // Whether the operator set SANDBOX_WORKSPACE_QUOTA_MB (an env file of theirs, the
    // environment, the command line) rather than leaving the default: a quota asked for that
    // cannot be had is a degradation, the default that cannot is only said.
    bool askedFor() const { return m_askedFor; }

private:
    WorkspaceVolume() = default;

    State m_state = State::Off;
    QString m_reason;
    QString m_detail;
    QString m_mountedHere; // the mount point this object mounted, to unmount at the end
    bool m_askedFor = false;
};

} // namespace cmcp
