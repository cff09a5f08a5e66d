#include "workspace/WorkspaceVolume.h"

#include "common/Settings.h"
#include "posix/Btrfs.h"
#include "posix/ErrnoText.h"
#include "posix/OwnDirectory.h"
#include "posix/LoopMount.h"
#include "posix/OpenDirectory.h"
#include "posix/UniqueFd.h"
#include "workspace/Workspace.h"
#include "workspace/WorkspaceCheckpoints.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

namespace {

// Formats a new sparse image of `bytes` at `image`; a file half-made by a start that died is
// made again from nothing.
bool makeImage(const QString &image, qint64 bytes, QString *error)
{
    const QString mkfs = QStandardPaths::findExecutable(
            QStringLiteral("mkfs.btrfs"),
            {QStringLiteral("/usr/sbin"), QStringLiteral("/sbin"), QStringLiteral("/usr/bin")});
    if (mkfs.isEmpty()) {
        *error = QStringLiteral("mkfs.btrfs not found (install btrfs-progs)");
        return false;
    }
    const QString partial = image + QStringLiteral(".partial");
    QFile::remove(partial);
    {
        QFile file(partial);
        if (!file.open(QIODevice::WriteOnly) || !file.resize(bytes)) {
            *error = QStringLiteral("cannot create the image %1: %2")
                             .arg(partial, file.errorString());
            return false;
        }
    }
    QProcess format;
    format.setProcessChannelMode(QProcess::MergedChannels);
    format.start(mkfs, {QStringLiteral("-q"), partial});
    if (!format.waitForFinished(120'000) || format.exitStatus() != QProcess::NormalExit
        || format.exitCode() != 0) {
        *error = QStringLiteral("mkfs.btrfs %1 failed: %2")
                         .arg(partial, QString::fromLocal8Bit(format.readAll()).trimmed());
        QFile::remove(partial);
        return false;
    }
    if (::rename(QFile::encodeName(partial).constData(), QFile::encodeName(image).constData())
        != 0) {
        *error = QStringLiteral("cannot rename %1: %2").arg(partial, errnoText(errno));
        return false;
    }
    return true;
}

} // namespace

WorkspaceVolume::WorkspaceVolume(WorkspaceVolume &&other) noexcept
    : m_state(other.m_state),
      m_reason(std::move(other.m_reason)),
      m_detail(std::move(other.m_detail)),
      m_mountedHere(std::exchange(other.m_mountedHere, QString())),
      m_askedFor(other.m_askedFor)
{
}

WorkspaceVolume::~WorkspaceVolume()
{
    if (m_mountedHere.isEmpty())
        return;
    if (::umount2(QFile::encodeName(m_mountedHere).constData(), MNT_DETACH) != 0)
        spdlog::warn("workspaces: cannot unmount {}: {}", m_mountedHere.toStdString(),
                     errnoText(errno).toStdString());
}

QString WorkspaceVolume::mountPathFor(const Settings &settings)
{
    return Workspace::sandboxRoot(settings) + QStringLiteral("/volume");
}

bool WorkspaceVolume::isMountedAt(const QString &path)
{
    const UniqueFd fd = openDirectory(path);
    struct stat self
    {
    }, parent{};
    return fd.isValid() && btrfs::isBtrfs(fd.get()) && ::fstat(fd.get(), &self) == 0
            && ::fstatat(fd.get(), "..", &parent, 0) == 0 && self.st_dev != parent.st_dev;
}

WorkspaceVolume WorkspaceVolume::prepare(const Settings &settings)
{
    WorkspaceVolume volume;
    const qint64 quotaMb = settings.integer(u"SANDBOX_WORKSPACE_QUOTA_MB");
    const SettingOrigin origin = settings.origin(u"SANDBOX_WORKSPACE_QUOTA_MB");
    volume.m_askedFor = origin != SettingOrigin::BuiltIn && origin != SettingOrigin::DefaultFile;
    if (quotaMb == 0) {
        volume.m_reason = QStringLiteral("SANDBOX_WORKSPACE_QUOTA_MB=0: workspaces have no quota");
        return volume;
    }
    const auto unavailable = [&volume](const QString &why) {
        volume.m_state = State::Unavailable;
        volume.m_reason = why
                + (volume.m_askedFor ? QStringLiteral("; workspaces have no quota")
                                     : QStringLiteral("; workspaces have no quota (the default "
                                                      "SANDBOX_WORKSPACE_QUOTA_MB cannot be "
                                                      "enforced here)"));
        return std::move(volume);
    };
    if (::geteuid() != 0)
        return unavailable(QStringLiteral("not root: only root can mount the workspace volume"));
    const QString root = Workspace::sandboxRoot(settings);
    const QString mount = mountPathFor(settings);
    // A mount follows a symbolic link at its target: one planted here would have the volume
    // cover (and chmod) whatever directory it names.
    if (QString why; !openOwnDirectory(mount, 0711, &why).isValid())
        return unavailable(why);
    const QString image = root + QStringLiteral("/workspaces.btrfs");
    if (!isMountedAt(mount)) {
        QString error;
        if (!QFileInfo::exists(image)
            && !makeImage(image, settings.integer(u"SANDBOX_WORKSPACE_VOLUME_GB") << 30, &error))
            return unavailable(error);
        if (!mountImage(image, mount, "btrfs", MS_NOSUID | MS_NODEV, &error))
            return unavailable(error);
    }
    // One left mounted by a run that was killed is this run's now, to unmount at its end.
    volume.m_mountedHere = mount;
    const UniqueFd top(
            ::open(QFile::encodeName(mount).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!top.isValid())
        return unavailable(QStringLiteral("cannot open %1: %2").arg(mount, errnoText(errno)));
    if (const int error = btrfs::enableQuota(top.get()))
        return unavailable(QStringLiteral("cannot enable btrfs quotas on %1: %2")
                                   .arg(mount, errnoText(error)));
    // Jobs pass through to their own workspace, and list none of the others.
    if (::fchmod(top.get(), 0711) != 0)
        return unavailable(QStringLiteral("cannot chmod %1: %2").arg(mount, errnoText(errno)));
    // What a crash left half-made: partial checkpoints and restores.
    WorkspaceCheckpoints::removeLeftovers(mount);
    WorkspaceCheckpoints::removeLeftovers(mount + QStringLiteral("/sessions"));
    volume.m_state = State::Available;
    volume.m_reason.clear();
    volume.m_detail = QStringLiteral("btrfs qgroups, %1 MB per workspace, on %2 (%3 GB image)")
                              .arg(quotaMb)
                              .arg(mount)
                              .arg(QFileInfo(image).size() >> 30);
    return volume;
}

} // namespace cmcp
