#include "posix/TreeOwnership.h"

#include "posix/DirectoryNames.h"
#include "posix/ErrnoText.h"
#include "posix/OpenDirectory.h"
#include "posix/UniqueFd.h"

#include <QFile>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

namespace {

// One descriptor per level on the way down: the bound keeps a tree nested a million levels
// deep from exhausting them.
constexpr int kMaxDepth = 256;

class Reowning
{
public:
    Reowning(uid_t owner, const std::function<bool(uid_t)> &takesFrom)
        : m_owner(owner),
          m_takesFrom(takesFrom)
    {
    }

    void directory(int fd, const QByteArray &path, int depth)
    {
        int listError = 0;
        const QList<QByteArray> names = directoryNames(fd, &listError);
        if (listError != 0) {
            fail(path, listError);
            return;
        }
        for (const QByteArray &name : names) {
            const QByteArray entryPath = path + '/' + name;
            struct stat status = {};
            if (::fstatat(fd, name.constData(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno != ENOENT)
                    fail(entryPath, errno);
                continue;
            }
            if (S_ISDIR(status.st_mode)) {
                if (status.st_dev != m_device || depth >= kMaxDepth)
                    continue;
                const UniqueFd child(openDirectoryAt(fd, name));
                if (!child.isValid()) {
                    if (errno != ENOENT)
                        fail(entryPath, errno);
                    continue;
                }
                change(child.get(), "", status, entryPath);
                directory(child.get(), entryPath, depth + 1);
            } else {
                change(fd, name, status, entryPath);
            }
        }
    }

    void top(int fd)
    {
        struct stat status = {};
        if (::fstat(fd, &status) != 0) {
            fail(".", errno);
            return;
        }
        m_device = status.st_dev;
        change(fd, "", status, ".");
        directory(fd, ".", 0);
    }

    const QString &firstError() const { return m_firstError; }

private:
    // `name` empty: `dirFd` itself.
    void change(int dirFd, const QByteArray &name, const struct stat &status,
                const QByteArray &path)
    {
        if (status.st_uid == m_owner || !m_takesFrom(status.st_uid))
            return;
        if (status.st_uid == 0 && !S_ISDIR(status.st_mode) && status.st_nlink > 1)
            return;
        const int flags = name.isEmpty() ? AT_EMPTY_PATH : AT_SYMLINK_NOFOLLOW;
        if (::fchownat(dirFd, name.constData(), m_owner, gid_t(-1), flags) != 0 && errno != ENOENT)
            fail(path, errno);
    }

    void fail(const QByteArray &path, int error)
    {
        if (m_firstError.isEmpty())
            m_firstError = QStringLiteral("cannot give %1 to uid %2: %3")
                                   .arg(QFile::decodeName(path))
                                   .arg(m_owner)
                                   .arg(errnoText(error));
    }

    const uid_t m_owner;
    const std::function<bool(uid_t)> &m_takesFrom;
    dev_t m_device = 0;
    QString m_firstError;
};

} // namespace

bool giveTreeTo(int directoryFd, uid_t owner, const std::function<bool(uid_t)> &takesFrom,
                QString *error)
{
    Reowning reowning(owner, takesFrom);
    reowning.top(directoryFd);
    if (reowning.firstError().isEmpty())
        return true;
    *error = reowning.firstError();
    return false;
}

} // namespace cmcp
