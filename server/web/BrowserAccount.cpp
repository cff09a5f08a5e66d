#include "web/BrowserAccount.h"

#include "posix/ErrnoText.h"
#include "common/Settings.h"
#include "posix/TreeRemoval.h"
#include "posix/UniqueFd.h"

#include <QDir>
#include <QFile>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
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

std::shared_ptr<const BrowserAccount> BrowserAccount::create(uid_t uid, gid_t gid, QString *error,
                                                             const QString &temporaryDirectory)
{
    const QString base = temporaryDirectory.isEmpty() ? QDir::tempPath() : temporaryDirectory;
    QByteArray parent = QFile::encodeName(base + QStringLiteral("/cmcp-browser-XXXXXX"));
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
