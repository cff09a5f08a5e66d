#pragma once

#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <sys/types.h>

namespace cmcp {

class Settings;

// The account a root daemon's browser workers run as: a uid and gid of their own, the first
// uid after the job pool (SANDBOX_UID_BASE + SANDBOX_UID_COUNT), which no job is given, and a
// private home directory (0700, owned by that uid) that lives as long as the daemon. As that
// user, Chromium runs with its own sandbox on, and a compromised browser holds none of the
// daemon's rights. A daemon that is not root cannot change user; its workers run as itself,
// where Chromium's sandbox is on anyway.
class BrowserAccount
{
public:
    // nullptr when the daemon is not root; nullptr and `error` when the account cannot be made.
    static std::shared_ptr<const BrowserAccount> forDaemon(const Settings &settings,
                                                           QString *error);

    uid_t uid() const { return m_uid; }
    gid_t gid() const { return m_gid; }
    QString home() const { return m_home.path(); }
    // What cmcp-browser is told, on its command line, to become.
    QStringList workerArguments() const;

    BrowserAccount(uid_t uid, gid_t gid);

private:
    uid_t m_uid;
    gid_t m_gid;
    QTemporaryDir m_home;
};

} // namespace cmcp
