#include "workspace/Workspace.h"

#include "common/SandboxIds.h"
#include "common/Settings.h"
#include "posix/Btrfs.h"
#include "posix/ErrnoText.h"
#include "posix/TreeOwnership.h"
#include "posix/TreeRemoval.h"
#include "posix/UniqueFd.h"
#include "workspace/WorkspaceCheckpoints.h"
#include "workspace/WorkspaceVolume.h"

#include <QDir>
#include <QFileInfo>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

Workspace::Workspace(QString path, gid_t sandboxGid, qint64 quotaBytes, WorkspaceOwner owner)
    : m_path(std::move(path)),
      m_sandboxGid(sandboxGid),
      m_quotaBytes(quotaBytes),
      m_owner(owner)
{
}

QString Workspace::sandboxRoot(const Settings &settings)
{
    return QDir::cleanPath(
            QDir(QDir::currentPath()).absoluteFilePath(settings.text(u"SANDBOX_ROOT")));
}

Workspace Workspace::fromSettings(const Settings &settings)
{
    const QString root = sandboxRoot(settings);
    const SandboxIds ids = SandboxIds::fromSettings(settings);
    const WorkspaceOwner owner{ids.workspaceUid, ids.uidBase, ids.uidCount};
    const qint64 quotaMb = settings.integer(u"SANDBOX_WORKSPACE_QUOTA_MB");
    if (const QString volume = WorkspaceVolume::mountPathFor(settings);
        quotaMb > 0 && WorkspaceVolume::isMountedAt(volume))
        return Workspace(volume + QStringLiteral("/workspace"), ids.gid, quotaMb << 20, owner);
    return Workspace(root + QStringLiteral("/workspace"), ids.gid, 0, owner);
}

QString Workspace::storeDirectory() const
{
    return QFileInfo(m_path).absolutePath();
}

Workspace Workspace::sibling(const QString &directory) const
{
    return Workspace(directory, m_sandboxGid, m_quotaBytes, m_owner);
}

namespace {

// The workspace as a subvolume limited to `quotaBytes`: made when missing, its limit set to
// the one in force when it exists.
bool ensureSubvolume(const QString &path, qint64 quotaBytes, QString *error)
{
    const QFileInfo info(path);
    const QByteArray parentPath = QFile::encodeName(info.absolutePath());
    const QByteArray name = QFile::encodeName(info.fileName());
    if (!QDir().mkpath(info.absolutePath())) {
        *error = QStringLiteral("cannot create %1").arg(info.absolutePath());
        return false;
    }
    const UniqueFd parent(::open(parentPath.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent.isValid()) {
        *error = QStringLiteral("cannot open %1: %2").arg(info.absolutePath(), errnoText(errno));
        return false;
    }
    int made = btrfs::createSubvolume(parent.get(), name);
    if (made != 0 && made != EEXIST) {
        *error = QStringLiteral("cannot create the workspace subvolume %1: %2")
                         .arg(path, errnoText(made));
        return false;
    }
    const UniqueFd workspace(::openat(parent.get(), name.constData(),
                                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!workspace.isValid() || !btrfs::isSubvolumeRoot(workspace.get())) {
        *error = QStringLiteral("workspace %1 exists but is not a btrfs subvolume").arg(path);
        return false;
    }
    if (const int limited = btrfs::limitReferencedBytes(workspace.get(), uint64_t(quotaBytes))) {
        *error = QStringLiteral("cannot set the quota of the workspace %1: %2")
                         .arg(path, errnoText(limited));
        return false;
    }
    return true;
}

} // namespace

bool Workspace::ownershipApplies() const
{
    return geteuid() == 0 && m_sandboxGid != 0;
}

bool Workspace::ensureExists(QString *error) const
{
    if (m_quotaBytes > 0 && !ensureSubvolume(m_path, m_quotaBytes, error))
        return false;
    const QFileInfo info(m_path);
    if (info.exists() && !info.isDir()) {
        *error = QStringLiteral("workspace %1 exists but is not a directory").arg(m_path);
        return false;
    }
    if (!info.exists() && !QDir().mkpath(m_path)) {
        *error = QStringLiteral("cannot create the workspace %1").arg(m_path);
        return false;
    }
    // Given to the sandbox group and made group-writable below: through a symbolic link planted
    // at its name, that would hand the jobs whatever directory the link names.
    const int fd = ::open(QFile::encodeName(m_path).constData(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        const int openError = errno;
        struct stat entry = {};
        const bool link = ::lstat(QFile::encodeName(m_path).constData(), &entry) == 0
                && S_ISLNK(entry.st_mode);
        *error = link
                ? QStringLiteral("the workspace %1 is a symbolic link: refused, the workspace is "
                                 "given to the jobs and cmcpd follows no link to it (remove the "
                                 "link, or set SANDBOX_ROOT to where the workspace should be)")
                          .arg(m_path)
                : QStringLiteral("cannot open the workspace %1: %2")
                          .arg(m_path, errnoText(openError));
        return false;
    }
    // A tree whose top is not the workspace owner's was written before workspaces had one owner
    // (by root's tools and by jobs as their pool uids, or restored from such a checkpoint): its
    // files become the owner's, or the jobs, which see only the owner's files as their own,
    // would find them all owned by nobody.
    QString reowned;
    if (!takeOwnership(fd, &reowned))
        spdlog::warn("workspace {}: {}", m_path.toStdString(), reowned.toStdString());
    // The top directory is ours: make it shared with the jobs even when it already existed.
    const bool adopted = adoptCreated(fd, true);
    ::close(fd);
    if (!adopted) {
        *error = QStringLiteral("cannot give the workspace %1 to gid %2: %3")
                         .arg(m_path)
                         .arg(m_sandboxGid)
                         .arg(errnoText(errno));
        return false;
    }
    return true;
}

bool Workspace::takeOwnership(QString *error) const
{
    if (!ownershipApplies() || m_owner.uid == uid_t(-1))
        return true;
    const UniqueFd top(::open(QFile::encodeName(m_path).constData(),
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!top.isValid()) {
        *error = QStringLiteral("cannot open the workspace %1: %2").arg(m_path, errnoText(errno));
        return false;
    }
    return takeOwnership(top.get(), error);
}

bool Workspace::takeOwnership(int topFd, QString *error) const
{
    struct stat top = {};
    if (!ownershipApplies() || m_owner.uid == uid_t(-1) || ::fstat(topFd, &top) != 0
        || top.st_uid == m_owner.uid)
        return true;
    const WorkspaceOwner owner = m_owner;
    if (!giveTreeTo(
                topFd, owner.uid,
                [owner](uid_t uid) {
                    return uid == 0
                            || (uid >= owner.jobUidBase
                                && uid - owner.jobUidBase < owner.jobUidCount);
                },
                error))
        return false;
    // A top of another owner than root or the pool is the owner's too, or every use would walk
    // the tree again.
    if (::fchown(topFd, owner.uid, gid_t(-1)) != 0) {
        *error = QStringLiteral("cannot give the workspace %1 to uid %2: %3")
                         .arg(m_path)
                         .arg(owner.uid)
                         .arg(errnoText(errno));
        return false;
    }
    return true;
}

bool Workspace::adoptCreated(int fd, bool isDirectory) const
{
    if (!ownershipApplies())
        return true;
    if (::fchown(fd, m_owner.uid, m_sandboxGid) != 0)
        return false;
    // After fchown: changing the group clears the setgid bit.
    return ::fchmod(fd, isDirectory ? 02775 : 0664) == 0;
}

std::optional<qint64> Workspace::usedBytes() const
{
    if (m_quotaBytes <= 0)
        return std::nullopt;
    const UniqueFd fd(::open(QFile::encodeName(m_path).constData(),
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.isValid() || !btrfs::isSubvolumeRoot(fd.get()))
        return std::nullopt;
    ::syncfs(fd.get());
    const std::optional<btrfs::QgroupUsage> usage = btrfs::usage(fd.get());
    if (!usage)
        return std::nullopt;
    return qint64(usage->referencedBytes);
}

void Workspace::removeWithCheckpoints(const QString &path)
{
    WorkspaceCheckpoints::removeAllOf(path);
    const QFileInfo info(path);
    const UniqueFd parent(::open(QFile::encodeName(info.absolutePath()).constData(),
                                 O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    const QByteArray name = QFile::encodeName(info.fileName());
    const UniqueFd workspace(parent.isValid()
                                     ? ::openat(parent.get(), name.constData(),
                                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                     : -1);
    if (workspace.isValid() && btrfs::isSubvolumeRoot(workspace.get())
        && btrfs::deleteSubvolume(parent.get(), name) == 0)
        return;
    if (QString error; !removeTree(path, &error))
        spdlog::warn("workspaces: {}", error.toStdString());
}

} // namespace cmcp
