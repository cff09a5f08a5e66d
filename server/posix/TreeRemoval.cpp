#include "posix/TreeRemoval.h"

#include "posix/DirectoryNames.h"
#include "posix/ErrnoText.h"
#include "posix/OpenDirectory.h"
#include "posix/UniqueFd.h"

#include <QFile>
#include <QList>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cmcp {

namespace {

// A directory deeper than this many levels below the removal's top has its ancestors' descriptors
// closed, so that a tree nested a million levels deep costs a bounded number of descriptors;
// going back up reopens each through ".." and checks it is the directory it was.
constexpr std::size_t kMaxOpenLevels = 64;
// A directory listed this often and still not empty keeps being refilled: given up on.
constexpr int kMaxListings = 16;

QString failure(const char *what, const QByteArray &name, int error)
{
    return QStringLiteral("%1 %2: %3")
            .arg(QLatin1String(what), QFile::decodeName(name), errnoText(error));
}

// One directory on the way down: its descriptor (closed while it lies deeper than
// kMaxOpenLevels above the current one), what it is, its name in its parent, and the names
// listed but not yet handled.
struct Level
{
    UniqueFd fd;
    dev_t device = 0;
    ino_t inode = 0;
    QByteArray name;
    QList<QByteArray> pending;
    int listings = 0;
};

class Removal
{
public:
    Removal(int topParentFd, const RemovalProbe &probe) : m_topParentFd(topParentFd), m_probe(probe)
    {
    }

    bool run(const QByteArray &name, QString *error);

private:
    void notify(RemovalStep step, int dirFd, const QByteArray &name) const
    {
        if (m_probe)
            m_probe(step, dirFd, name);
    }
    bool enter(int parentFd, const QByteArray &name, QString *error);
    bool handleNext(QString *error);
    bool finishTop(QString *error);
    int parentOfTop(QString *error);
    bool unlinkFile(int dirFd, const QByteArray &name, QString *error);

    const int m_topParentFd;
    const RemovalProbe &m_probe;
    dev_t m_device = 0;
    std::vector<Level> m_levels;
};

bool Removal::run(const QByteArray &name, QString *error)
{
    struct stat status
    {
    };
    if (::fstatat(m_topParentFd, name.constData(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return true;
        *error = failure("cannot examine", name, errno);
        return false;
    }
    if (!S_ISDIR(status.st_mode))
        return unlinkFile(m_topParentFd, name, error);
    // The whole removal stays on the top's file system.
    m_device = status.st_dev;
    if (!enter(m_topParentFd, name, error))
        return false;
    while (!m_levels.empty()) {
        const bool ok = m_levels.back().pending.isEmpty() ? finishTop(error) : handleNext(error);
        if (!ok)
            return false;
    }
    return true;
}

// Opens the directory `name` of `parentFd` and lists it, as the new deepest level. A name that
// meanwhile became something else than a directory is unlinked as what it now is.
bool Removal::enter(int parentFd, const QByteArray &name, QString *error)
{
    notify(RemovalStep::Descending, parentFd, name);
    UniqueFd fd(openDirectoryAt(parentFd, name));
    if (!fd.isValid()) {
        if (errno == ENOENT)
            return true;
        if (errno == ENOTDIR || errno == ELOOP)
            return unlinkFile(parentFd, name, error);
        if (errno == EXDEV) {
            *error = failure("left in place", name, EXDEV) + QStringLiteral(" (a mount point)");
            return false;
        }
        *error = failure("cannot open", name, errno);
        return false;
    }
    struct stat status
    {
    };
    if (::fstat(fd.get(), &status) != 0 || !S_ISDIR(status.st_mode)) {
        *error = failure("cannot examine", name, errno);
        return false;
    }
    if (status.st_dev != m_device) {
        *error = failure("left in place", name, EXDEV) + QStringLiteral(" (a mount point)");
        return false;
    }
    if (m_levels.size() >= kMaxOpenLevels)
        m_levels[m_levels.size() - kMaxOpenLevels].fd.reset();
    m_levels.push_back(Level{std::move(fd), status.st_dev, status.st_ino, name, {}, 0});
    Level &level = m_levels.back();
    int listError = 0;
    level.pending = directoryNames(level.fd.get(), &listError);
    level.listings = 1;
    if (listError != 0) {
        *error = failure("cannot list", name, listError);
        return false;
    }
    notify(RemovalStep::Listed, level.fd.get(), {});
    return true;
}

bool Removal::handleNext(QString *error)
{
    Level &level = m_levels.back();
    const QByteArray name = level.pending.takeFirst();
    const int dirFd = level.fd.get();
    struct stat status
    {
    };
    if (::fstatat(dirFd, name.constData(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return true;
        *error = failure("cannot examine", name, errno);
        return false;
    }
    // `level` may move when a level is pushed: nothing of it is used after enter().
    return S_ISDIR(status.st_mode) ? enter(dirFd, name, error) : unlinkFile(dirFd, name, error);
}

// Every name listed in the deepest directory is handled: list it again, and once it is empty
// remove it from its parent.
bool Removal::finishTop(QString *error)
{
    Level &level = m_levels.back();
    int listError = 0;
    level.pending = directoryNames(level.fd.get(), &listError);
    if (listError != 0) {
        *error = failure("cannot list", level.name, listError);
        return false;
    }
    if (!level.pending.isEmpty()) {
        if (++level.listings > kMaxListings) {
            *error = QStringLiteral("gave up on %1: it was refilled %2 times while being emptied")
                             .arg(QFile::decodeName(level.name))
                             .arg(kMaxListings);
            return false;
        }
        notify(RemovalStep::Listed, level.fd.get(), {});
        return true;
    }
    const int parentFd = parentOfTop(error);
    if (parentFd < 0)
        return false;
    const QByteArray name = level.name;
    notify(RemovalStep::Unlinking, parentFd, name);
    if (::unlinkat(parentFd, name.constData(), AT_REMOVEDIR) != 0) {
        // Refilled since the listing: list it again. Gone, or turned into something that is
        // not this directory: what the name holds now is left for the parent's next listing.
        if (errno == ENOTEMPTY || errno == EEXIST) {
            if (++level.listings > kMaxListings) {
                *error = failure("gave up on", name, errno);
                return false;
            }
            return true;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            *error = failure("cannot remove", name, errno);
            return false;
        }
    }
    m_levels.pop_back();
    return true;
}

// The descriptor of the deepest level's parent, reopened through ".." when it was closed for
// depth; -1 with `error` when that is no longer the directory it was (the tree was moved).
int Removal::parentOfTop(QString *error)
{
    if (m_levels.size() == 1)
        return m_topParentFd;
    Level &parent = m_levels[m_levels.size() - 2];
    if (parent.fd.isValid())
        return parent.fd.get();
    UniqueFd reopened(openDirectoryAt(m_levels.back().fd.get(), QByteArrayLiteral("..")));
    struct stat status
    {
    };
    if (!reopened.isValid() || ::fstat(reopened.get(), &status) != 0
        || status.st_dev != parent.device || status.st_ino != parent.inode) {
        *error = QStringLiteral("%1 was moved while it was being removed; the rest is left")
                         .arg(QFile::decodeName(parent.name));
        return -1;
    }
    parent.fd = std::move(reopened);
    return parent.fd.get();
}

bool Removal::unlinkFile(int dirFd, const QByteArray &name, QString *error)
{
    notify(RemovalStep::Unlinking, dirFd, name);
    if (::unlinkat(dirFd, name.constData(), 0) == 0 || errno == ENOENT)
        return true;
    // It became a directory since it was examined: the next listing finds it again.
    if (errno == EISDIR && !m_levels.empty() && m_levels.back().fd.get() == dirFd)
        return true;
    *error = failure("cannot remove", name, errno);
    return false;
}

} // namespace

bool removeTreeAt(int parentFd, const QByteArray &name, QString *error, const RemovalProbe &probe)
{
    if (name.isEmpty() || name.contains('/') || name == "." || name == "..") {
        *error = QStringLiteral("cannot remove '%1': not a name within its directory")
                         .arg(QFile::decodeName(name));
        return false;
    }
    return Removal(parentFd, probe).run(name, error);
}

bool removeTree(const QString &path, QString *error)
{
    const qsizetype slash = path.lastIndexOf(QLatin1Char('/'));
    if (!path.startsWith(QLatin1Char('/')) || slash == path.size() - 1) {
        *error = QStringLiteral("cannot remove '%1': not an absolute path to a name").arg(path);
        return false;
    }
    const QByteArray parent =
            QFile::encodeName(slash == 0 ? QStringLiteral("/") : path.left(slash));
    const UniqueFd parentFd(::open(parent.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parentFd.isValid()) {
        if (errno == ENOENT)
            return true;
        *error = QStringLiteral("cannot remove %1: cannot open its directory: %2")
                         .arg(path, errnoText(errno));
        return false;
    }
    QString why;
    if (removeTreeAt(parentFd.get(), QFile::encodeName(path.mid(slash + 1)), &why))
        return true;
    *error = QStringLiteral("cannot remove all of %1: %2").arg(path, why);
    return false;
}

bool removeTreeContents(int directoryFd, QString *error)
{
    int listError = 0;
    const QList<QByteArray> names = directoryNames(directoryFd, &listError);
    if (listError != 0) {
        *error = QStringLiteral("cannot list the directory: %1").arg(errnoText(listError));
        return false;
    }
    bool ok = true;
    for (const QByteArray &name : names) {
        QString why;
        if (!removeTreeAt(directoryFd, name, &why)) {
            *error = why;
            ok = false;
        }
    }
    return ok;
}

} // namespace cmcp
