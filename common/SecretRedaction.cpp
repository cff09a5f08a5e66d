#include "common/SecretRedaction.h"

#include <QJsonArray>
#include <QRegularExpression>

namespace cmcp {

namespace {

// Secrets written inline in free text, as in a command line: "Authorization: Bearer abc",
// "PASSWORD=abc", "--api-key abc" keep their name and lose their value.
QString redactInlineSecrets(QString text, const QString &placeholder)
{
    static const QRegularExpression scheme(
            QStringLiteral(R"((?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+)"));
    static const QRegularExpression assignment(QStringLiteral(
            R"((?i)([A-Za-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key)[A-Za-z0-9_-]*)"
            R"(["']?\s*[=:]\s*|--?[A-Za-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key))"
            R"([A-Za-z0-9_-]*\s+)("[^"]*"|'[^']*'|[^\s"']+))"));
    text.replace(scheme, QStringLiteral("\\1 ") + placeholder);
    text.replace(assignment, QStringLiteral("\\1") + placeholder);
    return text;
}

} // namespace

bool looksLikeSecretKey(QStringView key)
{
    // "pass" (not only "password"): "passphrase", "passwd", "db_pass".
    static const char *const secretWords[] = {"token",   "pass",     "secret",     "key",
                                              "auth",    "cookie",   "credential", "private",
                                              "session", "signature"};
    for (const char *word : secretWords)
        if (key.contains(QLatin1String(word), Qt::CaseInsensitive))
            return true;
    return false;
}

QJsonValue redactSecrets(const QJsonValue &value, const QString &placeholder)
{
    if (value.isString())
        return redactInlineSecrets(value.toString(), placeholder);
    if (value.isObject())
        return redactSecrets(value.toObject(), placeholder);
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue &item : value.toArray())
            out.append(redactSecrets(item, placeholder));
        return out;
    }
    return value;
}

QJsonObject redactSecrets(const QJsonObject &arguments, const QString &placeholder)
{
    QJsonObject out;
    for (auto it = arguments.begin(); it != arguments.end(); ++it) {
        // Masked whatever its type: even a null or a number says something about the secret.
        if (looksLikeSecretKey(it.key()))
            out.insert(it.key(), placeholder);
        else
            out.insert(it.key(), redactSecrets(it.value(), placeholder));
    }
    return out;
}

} // namespace cmcp

namespace cmcp::audit {

QJsonObject redactSecrets(const QJsonObject &arguments)
{
    return cmcp::redactSecrets(arguments, QLatin1String(RedactedValue));
}

} // namespace cmcp::audit

namespace cmcp::admin {

QJsonObject redactSecrets(const QJsonObject &arguments)
{
    return cmcp::redactSecrets(arguments, QLatin1String(MaskedValue));
}

} // namespace cmcp::admin
