// One redactor for every observer of a call: the audit log and the admin channel must lose the
// same secrets from the same arguments. They differ only in the placeholder each writes
// ("[redacted]" in the log, "********" on the console), so the two are compared with both
// placeholders read as one.

#include "RedactionReference.h"

#include "audit/AuditChain.h"
#include "audit/AuditRecord.h"
#include "admin/CallDescription.h"
#include "base/SecretRedaction.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTest>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;

namespace {

// Secrets a client may pass: as keys that name them, and written inline in free text.
QJsonObject argumentsWithSecrets()
{
    return {
            {"command", "curl -sS -H \"Authorization: Bearer abc123\" https://example.com/api"},
            {"script", "export GITHUB_TOKEN=ghp_inline; deploy --api-key 'k 1' --password=pw0"},
            {"password", "hunter2"},
            {"passphrase", "open sesame"},
            {"sessionKey", "sk-1"},
            {"signature", "sig-1"},
            {"headers", QJsonObject{{"Authorization", "Basic dXNlcjpwYXNz"}, {"Accept", "*/*"}}},
            {"env", QJsonArray{QJsonObject{{"github_token", "ghp_x"}, {"name", "n"}}}},
            {"cookie", QJsonValue::Null},
            {"path", "notes.txt"},
    };
}

// Pieces of text the redactor's patterns are made of, and what is near them: every word a pattern
// needs, in several cases, the separators around them, values, and letters outside ASCII that
// fold to ASCII ones (the Kelvin sign to k, the long s to s) or look like them.
QStringList redactionPieces()
{
    return {
            "Bearer",
            "bEaReR",
            "basic",
            "BASIC",
            "Digest",
            "negotiate",
            "token",
            "Token",
            "TOKEN",
            "tok",
            "en",
            "Authorization",
            "proxy-authorization",
            "authorization",
            "X-Api-Auth-Key",
            "x-auth",
            "X-",
            "auth",
            "AUTH",
            "password",
            "PASSWD",
            "passw",
            "Pass",
            "secret",
            "SECRET",
            "api_key",
            "api-key",
            "apikey",
            "API_KEY",
            "_key",
            "KEY",
            "key",
            "credential",
            "Credentials",
            "https://",
            "git+ssh://",
            "://",
            "ftp",
            "user",
            "bob:pw@",
            "@",
            ":",
            ": ",
            "=",
            " = ",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\"",
            "'",
            ";",
            "|",
            "&",
            ",",
            "-u",
            "-U",
            "--user",
            "--USER",
            "--proxy-user",
            "-p",
            "-P",
            "-a",
            "-pa",
            "mysql",
            "MySQL",
            "mysqldump",
            "mariadb",
            "mariadb-dump",
            "sshpass",
            "redis-cli",
            "REDIS-CLI",
            "-----BEGIN ",
            "-----begin ",
            "RSA PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "-----",
            "-----END ",
            "-----END RSA PRIVATE KEY-----",
            "abcdefgh12345678",
            "abc",
            "s3cr3t",
            "x",
            "0",
            "~+/=-._",
            "é",
            "😀",
            u"\u212Aey"_s,
            u"to\u212Aen"_s,
            u"\u017Fecret"_s,
            u"pa\u017F\u017Fword"_s,
            u"\u0130"_s,
            u"\u0131"_s,
            u"ｔｏｋｅｎ"_s,
            u"\u00A0"_s,
            u"\u2028"_s,
            QString(QChar(0xD800)),
            QString(QChar(0xDC00)),
            "[redacted]",
            "********",
            "pass",
            "PWD",
            "_pwd",
            "\\",
            "\"\"\"",
            "\'\'\'",
            "f",
            "]",
            "max_",
            "_length",
            "12",
    };
}

// A string of 1 to `most` random pieces, or of random printable ASCII, or of secrets written as
// the patterns know them (a name, a separator, a value), their parts drawn from the pieces.
QString randomText(QRandomGenerator &random, const QStringList &pieces, int most)
{
    QString text;
    const auto piece = [&] { return pieces.at(random.bounded(int(pieces.size()))); };
    if (random.bounded(3) == 0) {
        static const QStringList names{
                "Bearer",        "Token",          "basic",
                "Authorization", "X-Auth-Key",     "PASSWORD",
                "db_token",      "AWS_SECRET_KEY", "api-key",
                "--password",    "-u bob",         "--user",
                "https://bob",   "mysql -u root",  "sshpass",
                "redis-cli",     "credential",     "-----BEGIN RSA PRIVATE KEY",
                "DB_PASS",       "MYSQL_PWD",      "password: str",
                "max_tokens",    "{\"passwd\"",    "os.environ[\"DB_PASS\"]"};
        static const QStringList separators{
                " ",    "=", ": ",  ":",  " = ",    "-----",  "--- ", "\"=\"", "' ",    " -p",
                " -a ", "@", "://", "\t", " = f\"", "\"\"\"", " == ", ":=",    "=\\\"", "]: "};
        const int count = 1 + random.bounded(3);
        for (int i = 0; i < count; ++i) {
            text += names.at(random.bounded(int(names.size())));
            text += random.bounded(4) ? separators.at(random.bounded(int(separators.size())))
                                      : piece();
            text += random.bounded(3) ? u"abcdefgh1234"_s : piece();
            text += random.bounded(2) ? u" "_s : piece();
        }
        return text;
    }
    if (random.bounded(5) == 0) {
        const int length = random.bounded(80);
        for (int i = 0; i < length; ++i)
            text += QChar(char16_t(0x20 + random.bounded(0x5f)));
        return text;
    }
    const int count = 1 + random.bounded(most);
    for (int i = 0; i < count; ++i)
        text += piece();
    return text;
}

// The arguments as text, with either placeholder spelled the same.
QString comparable(const QJsonObject &arguments)
{
    return QString::fromUtf8(QJsonDocument(arguments).toJson(QJsonDocument::Compact))
            .replace(QStringLiteral("[redacted]"), QStringLiteral("<secret>"))
            .replace(QStringLiteral("********"), QStringLiteral("<secret>"));
}

} // namespace

class TestSecretRedaction : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void auditRecordAndCallEventRedactAlike()
    {
        ToolCallRecord call;
        call.callId = 3;
        call.tool = QStringLiteral("system_run_command");
        call.arguments = argumentsWithSecrets();
        call.startedAt = QDateTime::currentDateTimeUtc();

        // As the log writes them.
        const QJsonObject audited =
                QJsonDocument::fromJson(
                        audit::seal(audit::callStartedRecord(call), 1, audit::genesisHash()).line)
                        .object()
                        .value("arguments")
                        .toObject();
        const QJsonObject shown =
                describeCall(call, false, nullptr).toJson().value("arguments").toObject();

        QCOMPARE(comparable(shown), comparable(audited));
        for (const QJsonObject &arguments : {audited, shown}) {
            const QByteArray text = QJsonDocument(arguments).toJson(QJsonDocument::Compact);
            for (const char *secret : {"abc123", "ghp_inline", "k 1", "pw0", "hunter2", "sesame",
                                       "sk-1", "sig-1", "dXNlcjpwYXNz", "ghp_x"})
                QVERIFY2(!text.contains(secret), text.constData());
            // What is not secret stays readable.
            QVERIFY2(text.contains("Authorization: Bearer "), text.constData());
            QVERIFY2(text.contains("https://example.com/api"), text.constData());
            QCOMPARE(arguments.value("path").toString(), QStringLiteral("notes.txt"));
        }
    }

    // Each inline form keeps what names it and loses its value; text that only looks alike
    // (a port flag, prose about tokens) is kept.
    void inlineFormsKeepTheirNameAndLoseTheirValue()
    {
        const struct
        {
            const char *text;
            const char *redacted;
        } cases[] = {
                {"git clone https://bob:s3cret@example.com/r.git",
                 "git clone https://bob:[redacted]@example.com/r.git"},
                {"curl -u bob:hunter2 https://x", "curl -u bob:[redacted] https://x"},
                {"mysql -u root -pdbpass db", "mysql -u root -p[redacted] db"},
                {"sshpass -p 'pw 1' ssh host", "sshpass -p [redacted] ssh host"},
                {"-H 'Authorization: Token abcdefgh12'", "-H 'Authorization: Token [redacted]'"},
                {"-H 'X-Api-Auth: abc'", "-H 'X-Api-Auth: [redacted]'"},
                {"STRIPE_KEY=sk_live_1", "STRIPE_KEY=[redacted]"},
                {"-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
                 "-----BEGIN RSA PRIVATE KEY----- [redacted] -----END RSA PRIVATE KEY-----"},
                {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl",
                 "-----BEGIN OPENSSH PRIVATE KEY----- [redacted] "},
                {"ssh -p 2222 host; mkdir -p a/b", "ssh -p 2222 host; mkdir -p a/b"},
                {"the token is short", "the token is short"},
        };
        for (const auto &c : cases)
            QCOMPARE(cmcp::redactSecrets(QJsonValue(QString::fromUtf8(c.text)),
                                         QStringLiteral("[redacted]"))
                             .toString(),
                     QString::fromUtf8(c.redacted));
    }

    // A value assigned to a name that says it is secret, in a shell's, a configuration file's or a
    // program's syntax, loses its value, quotes and all; the name and what joins it stay.
    void assignmentsToSecretNamesLoseTheirValue()
    {
        const struct
        {
            const char *text;
            const char *redacted;
        } cases[] = {
                {"DB_PASS=hunter2 ./migrate", "DB_PASS=[redacted] ./migrate"},
                {"export API_TOKEN=hunter2", "export API_TOKEN=[redacted]"},
                {"MYSQL_PWD='hunter 2' mysql -u root", "MYSQL_PWD=[redacted] mysql -u root"},
                {"APP_SECRET=\"hunter2\" SIGNING_KEY=hunter2 PASSWORD=hunter2 PASS=hunter2 env",
                 "APP_SECRET=[redacted] SIGNING_KEY=[redacted] PASSWORD=[redacted] "
                 "PASS=[redacted] env"},
                {"echo x DB_PASS=hunter2", "echo x DB_PASS=[redacted]"},
                {"deploy --db-pass hunter2 --password=pw0",
                 "deploy --db-pass [redacted] "
                 "--password=[redacted]"},
                {"password = \"hunter2\"", "password = [redacted]"},
                {"passwd='hunter2'", "passwd=[redacted]"},
                {"api_key = f\"hunter{2}\"", "api_key = [redacted]"},
                {"secret_token: str = \"hunter2\"", "secret_token: str = [redacted]"},
                {"db_password: Optional[Dict[str, str]] = rb'hunter2'",
                 "db_password: Optional[Dict[str, str]] = [redacted]"},
                {"{\"password\": \"hunter2\", \"user\": \"bob\"}",
                 "{\"password\": [redacted], \"user\": \"bob\"}"},
                {"connect(host=\"db\", password=\"hunter2\")",
                 "connect(host=\"db\", password=[redacted])"},
                {"os.environ[\"DB_PASS\"] = \"hunter2\"", "os.environ[\"DB_PASS\"] = [redacted]"},
                {"if token == \"hunter2\":", "if token == [redacted]:"},
                {"password = \"\"\"hunter\n2\"\"\"\nprint(1)", "password = [redacted]\nprint(1)"},
                {"password = \"hun\\\"ter2\" + x", "password = [redacted] + x"},
                // A string never closed is secret to the end of its line.
                {"password = \"hunter2\nprint(1)", "password = [redacted]\nprint(1)"},
                // A number is a password too where the name does not say it measures one.
                {"DB_PASSWORD=123456", "DB_PASSWORD=[redacted]"},
        };
        for (const auto &c : cases)
            QCOMPARE(cmcp::redactInlineSecrets(QString::fromUtf8(c.text),
                                               QStringLiteral("[redacted]")),
                     QString::fromUtf8(c.redacted));
    }

    // What only looks like an assignment of a secret is kept: a number a name says measures one,
    // names that hold a secret word inside another word, the shell's working directory, a flag
    // naming a key's file, and the block a condition on a secret opens.
    void lookalikeAssignmentsAreKept()
    {
        for (const char *text : {
                     "password_length = 12; max_tokens=1024, PASSWORD_MIN_LENGTH=8",
                     "connect(token_ttl=3600)",
                     "bypass=1 compass=north keyboard=\"us\" monkey: x",
                     "PWD=/tmp OLDPWD=/ ls",
                     "openssl req --key server.pem",
                     "if not password:\n    raise ValueError(\"no password\")",
                     "for token in tokens:\n    print(token)",
             })
            QCOMPARE(cmcp::redactInlineSecrets(QString::fromUtf8(text),
                                               QStringLiteral("[redacted]")),
                     QString::fromUtf8(text));
    }

    // The redactor skips the patterns a text cannot match: it must redact exactly what running
    // every pattern does, whatever the text and the placeholder (which may itself hold words the
    // later patterns look for).
    void redactsWhatEveryPatternRedacts()
    {
        const QStringList pieces = redactionPieces();
        const QStringList placeholders{
                "[redacted]", "********",          "",  "token=x", "Bearer abcdefghij",
                "a://b:c@d",  "-----BEGIN X-----", "é", " -u a:b"};
        QRandomGenerator random(20261205);
        int redacted = 0;
        for (int i = 0; i < 40000; ++i) {
            const QString text = randomText(random, pieces, i % 10 == 0 ? 40 : 8);
            const QString &placeholder = placeholders.at(i % placeholders.size());
            const QString expected = reference::redactInlineSecrets(text, placeholder);
            const QString actual = cmcp::redactInlineSecrets(text, placeholder);
            if (actual != expected)
                QFAIL(qPrintable(QStringLiteral("%1\nwith placeholder %2 redacted as\n%3\n"
                                                "where every pattern gives\n%4")
                                         .arg(text, placeholder, actual, expected)));
            redacted += expected != text;
        }
        // The strings exercise the patterns: many are redacted.
        QVERIFY2(redacted > 7000, qPrintable(QString::number(redacted)));
    }

    void secretKeysAsQtFoldsCase()
    {
        const QStringList pieces = redactionPieces()
                + QStringList{"cookie",    "COOKIE",    "private",      "session", "Signature",
                              "name",      "path",      "keyword",      "bypass",  "sessionKey",
                              u"\u212A"_s, u"\u017F"_s, u"co\u212Aie"_s};
        QRandomGenerator random(20261206);
        int secret = 0;
        for (int i = 0; i < 40000; ++i) {
            const QString key = randomText(random, pieces, 3);
            const bool expected = reference::looksLikeSecretKey(key);
            if (cmcp::looksLikeSecretKey(key) != expected)
                QFAIL(qPrintable(QStringLiteral("%1: %2 where Qt's case folding says %3")
                                         .arg(key)
                                         .arg(!expected)
                                         .arg(expected)));
            secret += expected;
        }
        QVERIFY2(secret > 10000 && secret < 38000, qPrintable(QString::number(secret)));
    }
};

QTEST_GUILESS_MAIN(TestSecretRedaction)
#include "tst_secretredaction.moc"
