#include "workspace/Workspace.h"

#include "common/Settings.h"
#include "posix/ErrnoText.h"

#include <QDir>
#include <QFileInfo>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

Workspace::Workspace(QString path, gid_t sandboxGid)
    : m_path(std::move(path)),
      m_sandboxGid(sandboxGid)
{
}

Workspace Workspace::fromSettings(const Settings &settings)
{
    const QString root = QDir(QDir::currentPath()).absoluteFilePath(settings.text(u"SANDBOX_ROOT"));
    const qint64 gid = settings.integer(u"SANDBOX_GID");
    const qint64 uidBase = settings.integer(u"SANDBOX_UID_BASE");
    return Workspace(QDir::cleanPath(root + QStringLiteral("/workspace")),
                     gid_t(gid == 0 ? uidBase : gid));
}

bool Workspace::ownershipApplies() const
{
    return geteuid() == 0 && m_sandboxGid != 0;
}

bool Workspace::ensureExists(QString *error) const
{
    const QFileInfo info(m_path);
    if (info.exists() && !info.isDir()) {
        *error = QStringLiteral("workspace %1 exists but is not a directory").arg(m_path);
        return false;
    }
    if (!info.exists() && !QDir().mkpath(m_path)) {
        *error = QStringLiteral("cannot create the workspace %1").arg(m_path);
        return false;
    }
    const int fd =
            ::open(QFile::encodeName(m_path).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        *error = QStringLiteral("cannot open the workspace %1: %2").arg(m_path, errnoText(errno));
        return false;
    }
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

bool Workspace::adoptCreated(int fd, bool isDirectory) const
{
    if (!ownershipApplies())
        return true;
    if (::fchown(fd, uid_t(-1), m_sandboxGid) != 0)
        return false;
    // After fchown: changing the group clears the setgid bit.
    return ::fchmod(fd, isDirectory ? 02775 : 0664) == 0;
}

} // namespace cmcp
