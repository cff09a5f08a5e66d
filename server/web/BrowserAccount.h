#pragma once

#include <QString>
#include <QStringList>

#include <memory>
#include <sys/types.h>

namespace cmcp {

class Settings;

// The account a root daemon's browser workers run as: a uid and gid of their own, the first
// uid after the job pool (SANDBOX_UID_BASE + SANDBOX_UID_COUNT), which no job is given, and a
// private home directory (0700, owned by that uid) that lives as long as the account. As that
// user, Chromium runs with its own sandbox on, and a compromised browser holds none of the
// daemon's rights. A daemon that is not root cannot change user; its workers run as itself,
// where Chromium's sandbox is on anyway.
//
// The home is <temp>/cmcp-browser-<daemon pid>-XXXXXX/home: its parent is root's (0711), so the
// worker can neither rename its home nor put anything in its place, and root removes the whole
// directory at the end by descriptors (removeTree), whatever links the worker left in it. A
// daemon that was killed cannot: the next account made in the same directory removes the homes
// whose daemon pid no process has.
class BrowserAccount
{
public:
    // nullptr when the daemon is not root; nullptr and `error` when the account cannot be made.
    static std::shared_ptr<const BrowserAccount> forDaemon(const Settings &settings,
                                                           QString *error);

    // The account with a new home (in `temporaryDirectory`, QDir::tempPath() by default), after
    // removing the homes there of daemons that ended without removing theirs; nullptr and
    // `error` when the home cannot be made. Needs root.
    static std::shared_ptr<const BrowserAccount> create(uid_t uid, gid_t gid, QString *error,
                                                        const QString &temporaryDirectory = {});
    ~BrowserAccount();
    BrowserAccount(const BrowserAccount &) = delete;
    BrowserAccount &operator=(const BrowserAccount &) = delete;

    uid_t uid() const { return m_uid; }
    gid_t gid() const { return m_gid; }
    QString home() const { return m_parent + QStringLiteral("/home"); }
    // What cmcp-browser is told, on its command line, to become.
    QStringList workerArguments() const;

private:
    BrowserAccount(uid_t uid, gid_t gid, QString parent);

    uid_t m_uid;
    gid_t m_gid;
    QString m_parent; // root's, 0711
};

} // namespace cmcp
