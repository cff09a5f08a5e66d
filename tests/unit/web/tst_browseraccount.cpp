// BrowserAccount: the browser worker's home is its own, and root's removal of it at the end
// cannot be turned against the host. A child process, switched to the account's uid as the
// worker is, plants links to a victim directory in the home, tries to rename the home or put
// something in its place, and the account's end must leave every file of the victim. Needs
// root (the account's uid is another user's); skips with the reason otherwise.

#include "web/BrowserAccount.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <functional>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cmcp;

namespace {

constexpr uid_t kAccountUid = 125990;

// Runs `attack` in a child process as the account's uid; the child's exit code: 0 when every
// step it checks went as the test expects.
int runAs(const BrowserAccount &account, const std::function<int()> &attack)
{
    const pid_t child = ::fork();
    if (child == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setgid(account.gid()) != 0
            || ::setuid(account.uid()) != 0)
            ::_exit(100);
        ::_exit(attack());
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

} // namespace

class TestBrowserAccount : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theHomeIsTheWorkersAndItsParentRoots()
    {
        if (::geteuid() != 0)
            QSKIP("needs root: the account is another uid");
        QTemporaryDir temporary;
        QString error;
        auto account = BrowserAccount::create(kAccountUid, kAccountUid, &error, temporary.path());
        QVERIFY2(account, qPrintable(error));
        struct stat home
        {
        };
        struct stat parent
        {
        };
        QCOMPARE(::stat(QFile::encodeName(account->home()).constData(), &home), 0);
        QCOMPARE(::stat(QFile::encodeName(QFileInfo(account->home()).path()).constData(), &parent),
                 0);
        QCOMPARE(home.st_uid, kAccountUid);
        QCOMPARE(home.st_mode & 07777, mode_t(0700));
        QCOMPARE(parent.st_uid, uid_t(0));
        QCOMPARE(parent.st_mode & 07777, mode_t(0711));
        const QString parentPath = QFileInfo(account->home()).path();
        account.reset();
        QVERIFY(!QFileInfo::exists(parentPath));
    }

    void linksTheWorkerPlantsNeverLeadTheRemovalOut()
    {
        if (::geteuid() != 0)
            QSKIP("needs root: the account is another uid");
        QTemporaryDir temporary;
        // The worker passes through the temporary directory, as through /tmp.
        QCOMPARE(::chmod(QFile::encodeName(temporary.path()).constData(), 0755), 0);
        const QString victim = temporary.filePath(QStringLiteral("victim"));
        QVERIFY(QDir().mkpath(victim + QStringLiteral("/sub")));
        for (const QString &name : {QStringLiteral("/keep.txt"), QStringLiteral("/sub/keep.txt")}) {
            QFile file(victim + name);
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        QString error;
        auto account = BrowserAccount::create(kAccountUid, kAccountUid, &error, temporary.path());
        QVERIFY2(account, qPrintable(error));
        const QByteArray home = QFile::encodeName(account->home());
        const QByteArray parent = QFile::encodeName(QFileInfo(account->home()).path());
        const QByteArray target = QFile::encodeName(victim);
        const int outcome = runAs(*account, [&] {
            // Links anywhere in its own home: allowed, and must be harmless.
            if (::symlink(target.constData(), (home + "/link").constData()) != 0
                || ::mkdir((home + "/Default").constData(), 0700) != 0
                || ::symlink(target.constData(), (home + "/Default/Cache").constData()) != 0)
                return 1;
            // Moving its home away, or putting anything beside it: refused (root's parent).
            if (::rename(home.constData(), (parent + "/moved").constData()) == 0 || errno != EACCES)
                return 2;
            if (::symlink(target.constData(), (parent + "/home2").constData()) == 0)
                return 3;
            if (::rmdir(home.constData()) == 0)
                return 4;
            return 0;
        });
        QCOMPARE(outcome, 0);
        account.reset();
        QVERIFY(!QFileInfo::exists(QFile::decodeName(parent)));
        QVERIFY(QFile::exists(victim + QStringLiteral("/keep.txt")));
        QVERIFY(QFile::exists(victim + QStringLiteral("/sub/keep.txt")));
    }

    // A daemon killed by SIGKILL leaves its browser's home behind; the next daemon's account
    // removes it, and never the home of a daemon that still runs.
    void theHomesOfKilledDaemonsAreRemovedAndLiveOnesKept()
    {
        if (::geteuid() != 0)
            QSKIP("needs root: the account is another uid");
        QTemporaryDir temporary;
        QCOMPARE(::chmod(QFile::encodeName(temporary.path()).constData(), 0755), 0);
        const pid_t ended = ::fork();
        if (ended == 0)
            ::_exit(0);
        QVERIFY(ended > 0);
        ::waitpid(ended, nullptr, 0);
        QString error;
        // Made by the rules of a daemon's account, then orphaned: what a killed daemon leaves.
        const auto leftBy = [&](pid_t daemon) {
            const QString path =
                    temporary.filePath(QStringLiteral("cmcp-browser-%1-Ab12Cd").arg(daemon));
            [&] {
                QVERIFY(QDir().mkpath(path + QStringLiteral("/home/Default")));
                QFile file(path + QStringLiteral("/home/Default/Cookies"));
                QVERIFY(file.open(QIODevice::WriteOnly));
            }();
            return path;
        };
        const QString killed = leftBy(ended);
        const QString live = leftBy(::getppid());
        const QString foreign = temporary.filePath(QStringLiteral("cmcp-browser-other"));
        QVERIFY(QDir().mkpath(foreign));

        auto account = BrowserAccount::create(kAccountUid, kAccountUid, &error, temporary.path());
        QVERIFY2(account, qPrintable(error));
        QVERIFY2(!QFileInfo::exists(killed), qPrintable(killed));
        QVERIFY(QFileInfo::exists(live + QStringLiteral("/home/Default/Cookies")));
        QVERIFY(QFileInfo::exists(foreign));
        // Its own home carries its pid, so the daemon after it can tell the same.
        QVERIFY2(QFileInfo(account->home())
                         .path()
                         .contains(QStringLiteral("/cmcp-browser-%1-").arg(::getpid())),
                 qPrintable(account->home()));
    }
};

QTEST_GUILESS_MAIN(TestBrowserAccount)
#include "tst_browseraccount.moc"
