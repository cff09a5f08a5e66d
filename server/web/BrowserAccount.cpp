#include "BrowserAccount.h"

#include "Settings.h"

#include <QDir>
#include <QFile>

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace cmcp {

BrowserAccount::BrowserAccount(uid_t uid, gid_t gid)
    : m_uid(uid),
      m_gid(gid),
      m_home(QDir::tempPath() + QStringLiteral("/cmcp-browser-XXXXXX"))
{
}

std::shared_ptr<const BrowserAccount> BrowserAccount::forDaemon(const Settings &settings,
                                                                QString *error)
{
    if (::geteuid() != 0)
        return nullptr;
    const qint64 uid = settings.integer(u"SANDBOX_UID_BASE") + settings.integer(u"SANDBOX_UID_COUNT");
    if (uid >= qint64(uid_t(-1))) {
        *error = QStringLiteral("web_browse: no uid is left after the job pool for the browser "
                                "(SANDBOX_UID_BASE + SANDBOX_UID_COUNT = %1)")
                         .arg(uid);
        return nullptr;
    }
    auto account = std::make_shared<BrowserAccount>(uid_t(uid), gid_t(uid));
    // QTemporaryDir makes the directory 0700; only its owner changes.
    if (!account->m_home.isValid()
        || ::chown(QFile::encodeName(account->home()).constData(), account->m_uid,
                   account->m_gid)
                != 0) {
        *error = QStringLiteral("web_browse: cannot make the browser's home directory in %1: %2")
                         .arg(QDir::tempPath(),
                              account->m_home.isValid() ? QString::fromLocal8Bit(std::strerror(errno))
                                                        : account->m_home.errorString());
        return nullptr;
    }
    return account;
}

QStringList BrowserAccount::workerArguments() const
{
    return {QStringLiteral("--uid"), QString::number(m_uid), QStringLiteral("--gid"),
            QString::number(m_gid)};
}

} // namespace cmcp
