#include "mcp/PrincipalPolicy.h"
#include "mcp/PrincipalProfiles.h"

#include <QCryptographicHash>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;

namespace {

const QByteArray aliceDigest = QByteArray(64, 'a');

QByteArray validPolicy()
{
    return "# two profiles\n"
           "[profile readers]\n"
           "tools = file_read, file_list\n"
           "call_rate = 2, 3\n"
           "max_background_jobs = 0\n"
           "max_foreground_jobs = 1\n"
           "named_workspaces = 2\n"
           "named_workspace_mb = 64\n"
           "\n"
           "[principal alice]\n"
           "token_sha256 = "
            + aliceDigest
            + "\n"
              "profile = readers\n"
              "[principal bob]\n"
              "token_sha256 = "
            + QByteArray(64, 'b') + "\n";
}

QString parseError(const QByteArray &text)
{
    QString error;
    const std::optional<PrincipalPolicy> policy =
            PrincipalPolicy::parse(text, u"/etc/cmcp/policy"_s, &error);
    return policy ? QString() : error;
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
            && file.write(bytes) == bytes.size();
}

} // namespace

// MCP_POLICY_FILE's parser: what a valid file gives, and that every mistake is refused with the
// file, the line and the field named.
class TestPrincipalPolicy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readsProfilesAndPrincipals()
    {
        QString error;
        const std::optional<PrincipalPolicy> policy =
                PrincipalPolicy::parse(validPolicy(), u"policy"_s, &error);
        QVERIFY2(policy, qPrintable(error));
        QCOMPARE(policy->profiles.size(), 1);
        const Profile readers = policy->profiles.value(u"readers"_s);
        QCOMPARE(*readers.tools, (QStringList{u"file_read"_s, u"file_list"_s}));
        QCOMPARE(*readers.callRate, (CallRate{2, 3}));
        QCOMPARE(*readers.maxBackgroundJobs, 0);
        QCOMPARE(*readers.maxForegroundJobs, 1);
        QCOMPARE(*readers.namedWorkspaces, 2);
        QCOMPARE(*readers.namedWorkspaceMb, qint64(64));
        QCOMPARE(policy->principals.size(), 2);
        QCOMPARE(policy->principal(u"alice"_s)->profile, u"readers"_s);
        QCOMPARE(policy->principal(u"alice"_s)->digest, QByteArray::fromHex(aliceDigest));
        // No profile: the default one, the global settings.
        QVERIFY(policy->principal(u"bob"_s)->profile.isEmpty());
    }

    void aRateWithoutBurstHoldsOneSecond()
    {
        QString error;
        const auto policy = PrincipalPolicy::parse("[profile p]\ncall_rate = 0.5\n[profile q]\n"
                                                   "call_rate = 4\n",
                                                   u"policy"_s, &error);
        QVERIFY2(policy, qPrintable(error));
        QCOMPARE(*policy->profiles.value(u"p"_s).callRate, (CallRate{0.5, 1}));
        QCOMPARE(*policy->profiles.value(u"q"_s).callRate, (CallRate{4, 4}));
    }

    void refusesWithFileLineAndField_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown key") << QByteArray("[profile p]\n\ncolour = red\n")
                                     << u"/etc/cmcp/policy line 3: colour: unknown key"_s;
        QTest::newRow("key outside a section")
                << QByteArray("tools = file_read\n")
                << u"line 1: tools: a key outside any [profile] or [principal] section"_s;
        QTest::newRow("bad rate") << QByteArray("[profile p]\ncall_rate = fast\n")
                                  << u"line 2: call_rate: 'fast' is not"_s;
        QTest::newRow("zero rate")
                << QByteArray("[profile p]\ncall_rate = 0\n") << u"line 2: call_rate:"_s;
        QTest::newRow("burst below one")
                << QByteArray("[profile p]\ncall_rate = 1, 0.5\n") << u"line 2: call_rate:"_s;
        QTest::newRow("negative cap") << QByteArray("[profile p]\nmax_background_jobs = -1\n")
                                      << u"line 2: max_background_jobs: '-1' is not a whole"_s;
        QTest::newRow("set twice") << QByteArray("[profile p]\ntools = a\ntools = b\n")
                                   << u"line 3: tools: set twice"_s;
        QTest::newRow("profile twice") << QByteArray("[profile p]\n[profile p]\n")
                                       << u"line 2: the profile 'p' appears twice"_s;
        QTest::newRow("default redefined")
                << QByteArray("[profile default]\n") << u"line 1: the profile 'default' is"_s;
        QTest::newRow("bad section")
                << QByteArray("[group g]\n") << u"line 1: unknown section kind 'group'"_s;
        QTest::newRow("bad name") << QByteArray("[principal a/b]\n")
                                  << u"line 1: the name 'a/b' is not"_s;
        QTest::newRow("local") << QByteArray("[principal local]\n")
                               << u"line 1: the name 'local' is kept"_s;
        QTest::newRow("no token") << QByteArray(
                "[principal carol]\nprofile = default\n[profile p]\n")
                                  << u"line 1: [principal carol]: needs token_sha256"_s;
        QTest::newRow("no token at the end")
                << QByteArray("\n[principal carol]\n") << u"line 2: [principal carol]: needs"_s;
        QTest::newRow("short digest") << QByteArray("[principal carol]\ntoken_sha256 = abc\n")
                                      << u"line 2: token_sha256: not 64 hex digits"_s;
        QTest::newRow("unknown profile")
                << ("[principal carol]\ntoken_sha256 = " + aliceDigest + "\nprofile = ghosts\n")
                << u"line 3: profile: no [profile ghosts] in this file"_s;
        QTest::newRow("principal twice")
                << ("[principal c]\ntoken_sha256 = " + aliceDigest + "\n[principal c]\n")
                << u"line 3: the principal 'c' appears twice"_s;
        QTest::newRow("per-profile commands are not enforced")
                << QByteArray("[profile p]\nbash_allowed_commands = ls\n")
                << u"line 2: bash_allowed_commands: not set per profile by this daemon: "
                   "BASH_ALLOWED_COMMANDS applies to every principal"_s;
        QTest::newRow("not key = value")
                << QByteArray("[profile p]\ntools\n") << u"line 2: expected"_s;
    }

    void refusesWithFileLineAndField()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        const QString error = parseError(text);
        QVERIFY2(error.startsWith(u"MCP_POLICY_FILE /etc/cmcp/policy line "_s), qPrintable(error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    void tokenFileIsHashedRelativeToThePolicy()
    {
        QTemporaryDir dir;
        QVERIFY(writeFile(dir.filePath(u"alice.token"_s), "alice-token-0123456789\n"));
        QVERIFY(writeFile(dir.filePath(u"policy"_s),
                          "[principal alice]\ntoken_file = alice.token\n"));
        QString error;
        const auto policy = PrincipalPolicy::read(dir.filePath(u"policy"_s), &error);
        QVERIFY2(policy, qPrintable(error));
        QCOMPARE(policy->principal(u"alice"_s)->digest,
                 QCryptographicHash::hash("alice-token-0123456789", QCryptographicHash::Sha256));
        QVERIFY(writeFile(dir.filePath(u"policy"_s), "[principal alice]\ntoken_file = none\n"));
        QVERIFY(!PrincipalPolicy::read(dir.filePath(u"policy"_s), &error));
        QVERIFY2(error.contains(u"line 2: token_file: "_s + dir.filePath(u"none"_s)),
                 qPrintable(error));
    }

    void profilesAnswerPerPrincipal()
    {
        PrincipalProfiles profiles;
        QString error;
        QVERIFY2(profiles.apply(*PrincipalPolicy::parse(validPolicy(), u"p"_s, &error), &error),
                 qPrintable(error));
        QCOMPARE(profiles.profileName(u"alice"_s), u"readers"_s);
        QCOMPARE(profiles.profileName(u"bob"_s), u"default"_s);
        QCOMPARE(profiles.profileName(u"stranger"_s), u"default"_s);
        QVERIFY(profiles.offersTool(u"alice"_s, u"file_read"_s));
        QVERIFY(!profiles.offersTool(u"alice"_s, u"system_run_command"_s));
        QVERIFY(profiles.offersTool(u"bob"_s, u"system_run_command"_s));
    }

    void unknownToolsAndTakenNamesAreRefused()
    {
        PrincipalProfiles profiles;
        profiles.setKnownTools({u"file_read"_s});
        QString error;
        QVERIFY(!profiles.apply(*PrincipalPolicy::parse(validPolicy(), u"p"_s, &error), &error));
        QVERIFY2(error.contains(u"[profile readers] tools: no tool 'file_list'"_s),
                 qPrintable(error));
        profiles.setKnownTools({});
        profiles.setNamesTaken({u"bob"_s});
        QVERIFY(!profiles.apply(*PrincipalPolicy::parse(validPolicy(), u"p"_s, &error), &error));
        QVERIFY2(error.contains(u"[principal bob]: the name is given already"_s),
                 qPrintable(error));
        QVERIFY(!profiles.hasPolicy());
    }

    // A burst of 3 at 2 a second: three calls pass, the fourth waits about half a second, and
    // another principal's bucket is its own.
    void theCallRateIsATokenBucket()
    {
        PrincipalProfiles profiles;
        QString error;
        QVERIFY(profiles.apply(*PrincipalPolicy::parse(validPolicy(), u"p"_s, &error), &error));
        for (int call = 0; call < 3; ++call)
            QCOMPARE(profiles.takeCall(u"alice"_s), 0);
        const qint64 wait = profiles.takeCall(u"alice"_s);
        QVERIFY2(wait > 300 && wait <= 500, qPrintable(QString::number(wait)));
        for (int call = 0; call < 20; ++call)
            QCOMPARE(profiles.takeCall(u"bob"_s), 0);
        QThread::msleep(wait + 20);
        QCOMPARE(profiles.takeCall(u"alice"_s), 0);
        QVERIFY(profiles.takeCall(u"alice"_s) > 0);
    }

    void aFailedReloadKeepsThePolicyInForce()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"policy"_s);
        QVERIFY(writeFile(path, validPolicy()));
        PrincipalProfiles profiles;
        QString error;
        QVERIFY2(profiles.load(path, &error), qPrintable(error));
        QSignalSpy failed(&profiles, &PrincipalProfiles::reloadFailed);
        QSignalSpy reloaded(&profiles, &PrincipalProfiles::reloaded);
        QVERIFY(writeFile(path, "[profile readers]\ntools = file_read\ncolour = red\n"));
        QVERIFY(!profiles.reload(&error));
        QCOMPARE(failed.size(), 1);
        QVERIFY2(error.contains(u"line 3: colour"_s), qPrintable(error));
        QCOMPARE(profiles.profileName(u"alice"_s), u"readers"_s);
        QVERIFY(!profiles.offersTool(u"alice"_s, u"system_run_command"_s));
        QVERIFY(writeFile(path, "[principal alice]\ntoken_sha256 = " + aliceDigest + "\n"));
        QVERIFY2(profiles.reload(&error), qPrintable(error));
        QCOMPARE(reloaded.size(), 1);
        QCOMPARE(profiles.profileName(u"alice"_s), u"default"_s);
        QVERIFY(profiles.offersTool(u"alice"_s, u"system_run_command"_s));
    }
};

QTEST_GUILESS_MAIN(TestPrincipalPolicy)
#include "tst_principalpolicy.moc"
