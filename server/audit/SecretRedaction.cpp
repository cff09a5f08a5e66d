#include "SecretRedaction.h"

#include <QJsonArray>
#include <QRegularExpression>

namespace cmcp::audit {

namespace {

QJsonValue redactValue(const QJsonValue &value);

QJsonArray redactArray(const QJsonArray &array)
{
    QJsonArray out;
    for (const QJsonValue &item : array)
        out.append(redactValue(item));
    return out;
}

// Secrets written inline in free text, as in a command line: "Authorization: Bearer abc",
// "PASSWORD=abc", "--api-key abc" keep their name and lose their value.
QString redactInlineSecrets(QString text)
{
    static const QRegularExpression scheme(QStringLiteral(R"((?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+)"));
    static const QRegularExpression assignment(QStringLiteral(
            R"((?i)([A-Za-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key)[A-Za-z0-9_-]*["']?\s*[=:]\s*|--?[A-Za-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key)[A-Za-z0-9_-]*\s+)("[^"]*"|'[^']*'|[^\s"']+))"));
    text.replace(scheme, QStringLiteral("\\1 ") + QLatin1String(RedactedValue));
    text.replace(assignment, QStringLiteral("\\1") + QLatin1String(RedactedValue));
    return text;
}

QJsonValue redactValue(const QJsonValue &value)
{
    if (value.isString())
        return redactInlineSecrets(value.toString());
    if (value.isObject())
        return redactSecrets(value.toObject());
    if (value.isArray())
        return redactArray(value.toArray());
    return value;
}

} // namespace

bool looksLikeSecretKey(QStringView key)
{
    static const char *const secretWords[] = {"token", "password", "passwd", "passphrase", "secret",
                                              "key", "authorization", "auth", "cookie",
                                              "credential", "private", "session", "signature"};
    for (const char *word : secretWords)
        if (key.contains(QLatin1String(word), Qt::CaseInsensitive))
            return true;
    return false;
}

QJsonObject redactSecrets(const QJsonObject &arguments)
{
    QJsonObject out;
    for (auto it = arguments.begin(); it != arguments.end(); ++it) {
        if (looksLikeSecretKey(it.key()))
            out.insert(it.key(), QLatin1String(RedactedValue));
        else
            out.insert(it.key(), redactValue(it.value()));
    }
    return out;
}

} // namespace cmcp::audit
