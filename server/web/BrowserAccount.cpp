#include "web/BrowserAccount.h"

#include "posix/ErrnoText.h"
#include "common/Settings.h"
#include "posix/TreeRemoval.h"
#include "posix/UniqueFd.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

BrowserAccount::BrowserAccount(uid_t uid, gid_t gid, QString parent)
    : m_uid(uid),
      m_gid(gid),
      m_parent(std::move(parent))
{
}

BrowserAccount::~BrowserAccount()
{
    QString error;
    // The parent is root's, in a directory where only its owner may move or replace it (/tmp
    // is sticky): its removal by descriptors cannot be led elsewhere.
    if (!removeTree(m_parent, &error))
        spdlog::warn("web_browse: cannot remove the browser's home {}: {}", home().toStdString(),
                     error.toStdString());
}

namespace {

// Removes the homes in `base` that daemons which are gone left behind (a daemon killed by
// SIGKILL or the OOM killer never runs its destructors): directories of root named for a pid
// that no process has. A home whose pid is alive is kept, whoever holds that pid now.
void removeHomesOfEndedDaemons(const QString &base)
{
    static const QRegularExpression pattern(
            QStringLiteral("^cmcp-browser-([0-9]+)-[A-Za-z0-9]{6}$"));
    const QStringList names = QDir(base).entryList({QStringLiteral("cmcp-browser-*")},
                                                   QDir::Dirs | QDir::NoSymLinks | QDir::Hidden);
    for (const QString &name : names) {
        const QRegularExpressionMatch match = pattern.match(name);
        bool isNumber = false;
        const qint64 pid = match.hasMatch() ? match.captured(1).toLongLong(&isNumber) : 0;
        if (!isNumber || pid <= 0 || pid == ::getpid() || pid > std::numeric_limits<pid_t>::max())
            continue;
        if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH)
            continue;
        const QString path = base + QLatin1Char('/') + name;
        struct stat status
        {
        };
        if (::lstat(QFile::encodeName(path).constData(), &status) != 0 || !S_ISDIR(status.st_mode)
            || status.st_uid != 0)
            continue;
        QString error;
        if (removeTree(path, &error))
            spdlog::info("web_browse: removed {}, the browser's home of daemon {}, which ended "
                         "without removing it",
                         path.toStdString(), pid);
        else
            spdlog::warn("web_browse: cannot remove {}, left by daemon {}: {}", path.toStdString(),
                         pid, error.toStdString());
    }
}

} // namespace

std::shared_ptr<const BrowserAccount> BrowserAccount::create(uid_t uid, gid_t gid, QString *error,
                                                             const QString &temporaryDirectory)
{
    const QString base = temporaryDirectory.isEmpty() ? QDir::tempPath() : temporaryDirectory;
    removeHomesOfEndedDaemons(base);
    // Named for this daemon's pid, so that a later daemon can tell it from a live one's.
    QByteArray parent =
            QFile::encodeName(base + QStringLiteral("/cmcp-browser-%1-XXXXXX").arg(::getpid()));
    const auto failed = [&](const QString &what) {
        *error = QStringLiteral("web_browse: cannot make the browser's home directory in %1: "
                                "%2: %3")
                         .arg(base, what, errnoText(errno));
        return nullptr;
    };
    if (!::mkdtemp(parent.data()))
        return failed(QStringLiteral("mkdtemp"));
    const UniqueFd parentFd(
            ::open(parent.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    // mkdtemp made it 0700: the worker must pass through it to its home, and nothing more.
    const bool parentMade = parentFd.isValid() && ::fchmod(parentFd.get(), 0711) == 0
            && ::mkdirat(parentFd.get(), "home", 0700) == 0;
    const UniqueFd homeFd(parentMade ? ::openat(parentFd.get(), "home",
                                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                     : -1);
    if (!homeFd.isValid() || ::fchown(homeFd.get(), uid, gid) != 0) {
        const int cause = errno;
        QString ignored;
        removeTree(QFile::decodeName(parent), &ignored);
        errno = cause;
        return failed(QFile::decodeName(parent));
    }
    return std::shared_ptr<const BrowserAccount>(
            new BrowserAccount(uid, gid, QFile::decodeName(parent)));
}

std::shared_ptr<const BrowserAccount> BrowserAccount::forDaemon(const Settings &settings,
                                                                QString *error)
{
    if (::geteuid() != 0)
        return nullptr;
    const qint64 uid =
            settings.integer(u"SANDBOX_UID_BASE") + settings.integer(u"SANDBOX_UID_COUNT");
    if (uid >= qint64(uid_t(-1))) {
        *error = QStringLiteral("web_browse: no uid is left after the job pool for the browser "
                                "(SANDBOX_UID_BASE + SANDBOX_UID_COUNT = %1)")
                         .arg(uid);
        return nullptr;
    }
    return create(uid_t(uid), gid_t(uid), error);
}

QStringList BrowserAccount::workerArguments() const
{
    return {QStringLiteral("--uid"), QString::number(m_uid), QStringLiteral("--gid"),
            QString::number(m_gid)};
}

} // namespace cmcp
