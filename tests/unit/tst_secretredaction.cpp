// One redactor for every observer of a call: the audit log and the admin channel must lose the
// same secrets from the same arguments. They differ only in the placeholder each writes
// ("[redacted]" in the log, "********" on the console), so the two are compared with both
// placeholders read as one.

#include "audit/AuditChain.h"
#include "audit/AuditRecord.h"
#include "admin/CallDescription.h"
#include "common/SecretRedaction.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace cmcp;

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
};

QTEST_GUILESS_MAIN(TestSecretRedaction)
#include "tst_secretredaction.moc"
