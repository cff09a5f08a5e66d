#include "sandbox/AbandonedCgroups.h"

#include <QFile>
#include <QTimer>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace cmcp {

namespace {

constexpr int kRetries = 30;
constexpr int kRetryPauseMs = 100;

bool onCgroupFileSystem(const QByteArray &path)
{
    struct statfs fs
    {
    };
    return ::statfs(path.constData(), &fs) == 0
            && (fs.f_type == CGROUP_SUPER_MAGIC || fs.f_type == CGROUP2_SUPER_MAGIC);
}

void removeWithRetries(QList<QByteArray> directories, int retriesLeft)
{
    QList<QByteArray> busy;
    for (const QByteArray &dir : directories) {
        if (::rmdir(dir.constData()) != 0 && errno == EBUSY)
            busy.append(dir);
    }
    if (busy.isEmpty())
        return;
    if (retriesLeft == 0) {
        spdlog::warn("sandbox: the cgroup {} of a jail that died still holds tasks; left in place",
                     busy.first().toStdString());
        return;
    }
    QTimer::singleShot(kRetryPauseMs,
                       [busy, retriesLeft] { removeWithRetries(busy, retriesLeft - 1); });
}

} // namespace

void removeAbandonedCgroups(const QStringList &directories)
{
    QList<QByteArray> paths;
    for (const QString &dir : directories) {
        const QByteArray path = QFile::encodeName(dir);
        if (dir.startsWith(QLatin1Char('/')) && !dir.contains(QLatin1String("/../"))
            && onCgroupFileSystem(path))
            paths.append(path);
    }
    removeWithRetries(paths, kRetries);
}

} // namespace cmcp
