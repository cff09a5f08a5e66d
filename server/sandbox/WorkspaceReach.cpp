#include "sandbox/WorkspaceReach.h"

#include <QFile>
#include <QFileInfo>
#include <QStringList>

#include <sys/stat.h>

namespace cmcp {

std::optional<ClosedDirectory> firstClosedDirectory(const QString &workspace, uid_t uid, gid_t gid)
{
    QString resolved = QFileInfo(workspace).canonicalFilePath();
    if (resolved.isEmpty())
        resolved = QFileInfo(workspace).absoluteFilePath();
    const QStringList parts = resolved.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    QString directory = QStringLiteral("/");
    // Every proper ancestor, "/" included; the workspace's own mode is the daemon's to set.
    for (qsizetype i = 0; i < parts.size(); ++i) {
        struct stat st
        {
        };
        if (::stat(QFile::encodeName(directory).constData(), &st) != 0)
            return std::nullopt; // gone: the tools' own set-up says so
        const mode_t bit = st.st_uid == uid ? S_IXUSR : st.st_gid == gid ? S_IXGRP : S_IXOTH;
        if (!(st.st_mode & bit))
            return ClosedDirectory{directory, mode_t(st.st_mode & 07777), st.st_uid, st.st_gid};
        directory = (directory == QLatin1String("/") ? QString() : directory) + QLatin1Char('/')
                + parts[i];
    }
    return std::nullopt;
}

QString closedDirectoryRefusal(const QString &workspace, const ClosedDirectory &closed, uid_t uid)
{
    return QStringLiteral("the workspace %1 is out of the jobs' reach: %2 is mode %3 (owner uid "
                          "%4, group %5), so uid %6 cannot search it, and without the "
                          "namespaces layer jobs reach the workspace by its host path; "
                          "chmod o+x %2, or set SANDBOX_ROOT below directories every user may "
                          "search (e.g. /var/lib/cmcp)")
            .arg(workspace, closed.path,
                 QStringLiteral("%1").arg(uint(closed.mode), 4, 8, QLatin1Char('0')))
            .arg(closed.owner)
            .arg(closed.group)
            .arg(uid);
}

} // namespace cmcp
