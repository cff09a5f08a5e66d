#include "common/SecretRedaction.h"

#include <QJsonArray>
#include <QRegularExpression>

namespace cmcp {

// Secrets written inline in free text, as in a command line or a configuration file. Each keeps
// what names it and loses its value:
// - "Authorization: Bearer abc", "Token abc", "Basic abc" (a scheme and its credentials);
// - "Authorization: abc", "X-Auth: abc", "X-Api-Auth-Key: abc" (headers whose name says auth);
// - "PASSWORD=abc", "db_token: abc", "AWS_ACCESS_KEY=abc", "--api-key abc", "--password=abc";
// - "https://user:abc@host" (a URL's password);
// - "curl -u user:abc", "--user user:abc" (a user and password joined by a colon);
// - "mysql -pabc", "sshpass -p abc", "redis-cli -a abc" (the programs whose short flag takes a
//   password; elsewhere -p means a port or "parents" and is kept);
// - every PEM block ("-----BEGIN OPENSSH PRIVATE KEY-----" ...), whose armour lines stay.
QString redactInlineSecrets(QString text, const QString &placeholder)
{
    using Options = QRegularExpression::PatternOptions;
    const auto pattern = [](const char *source, Options options = {}) {
        return QRegularExpression(QString::fromLatin1(source),
                                  options | QRegularExpression::CaseInsensitiveOption);
    };
    static const QRegularExpression pem =
            pattern(R"((-----BEGIN ([A-Z0-9 ]+)-----)(?:.*?(-----END \2-----)|.*))",
                    QRegularExpression::DotMatchesEverythingOption);
    // "Token" is also an English word: only a credential-like value (8 characters or more) follows.
    static const QRegularExpression scheme =
            pattern(R"(\b(bearer|basic|digest|negotiate|token(?=\s+[A-Za-z0-9._~+/=-]{8}))\s+)"
                    R"([A-Za-z0-9._~+/=-]+)");
    static const QRegularExpression authHeader =
            pattern(R"(\b((?:proxy-)?authorization\s*:\s*|x-[A-Za-z0-9-]*auth[A-Za-z0-9-]*\s*:\s*))"
                    R"((?!(?:bearer|basic|digest|negotiate|token)\s)([^\s"',;]+))");
    static const QRegularExpression assignment = pattern(
            R"(([A-Za-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key|_key\b|credential))"
            R"([A-Za-z0-9_-]*["']?\s*[=:]\s*|--?[A-Za-z0-9_-]*(?:token|password|passwd|secret|)"
            R"(api[_-]?key)[A-Za-z0-9_-]*\s+)("[^"]*"|'[^']*'|[^\s"']+))");
    static const QRegularExpression urlPassword =
            pattern(R"(\b([a-z][a-z0-9+.-]*://[^\s/:@"']*):[^\s/@"']*@)");
    static const QRegularExpression userPassword =
            pattern(R"((\s(?:-u|--user|--proxy-user)[=\s]?\s*["']?[^\s:"']+):[^\s"']+)");
    static const QRegularExpression passwordFlag =
            pattern(R"(\b((?:mysql[a-z]*|mariadb[a-z-]*|sshpass|redis-cli)\b[^\n;|&]*?\s-[pa]\s*))"
                    R"(("[^"]*"|'[^']*'|[^\s"']+))");
    text.replace(pem, QStringLiteral("\\1 ") + placeholder + QStringLiteral(" \\3"));
    text.replace(scheme, QStringLiteral("\\1 ") + placeholder);
    text.replace(authHeader, QStringLiteral("\\1") + placeholder);
    text.replace(assignment, QStringLiteral("\\1") + placeholder);
    text.replace(urlPassword, QStringLiteral("\\1:") + placeholder + QStringLiteral("@"));
    text.replace(userPassword, QStringLiteral("\\1:") + placeholder);
    text.replace(passwordFlag, QStringLiteral("\\1") + placeholder);
    return text;
}

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
