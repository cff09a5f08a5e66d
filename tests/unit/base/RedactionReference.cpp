#include "RedactionReference.h"

#include "base/SecretRedaction.h"

#include <QRegularExpression>

namespace cmcp::reference {

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
            pattern(R"(\b(bearer|basic|digest|negotiate|token(?=\h+[A-Za-z0-9._~+/=-]{8}))\h+)"
                    R"([A-Za-z0-9._~+/=-]+)");
    static const QRegularExpression authHeader =
            pattern(R"(\b((?:proxy-)?authorization\h*:\h*|x-[A-Za-z0-9-]*auth[A-Za-z0-9-]*\h*:\h*))"
                    R"((?!(?:bearer|basic|digest|negotiate|token)\s)([^\s"',;]+))");
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
    // Assignments are redacted by code rather than one replacement; that code is the daemon's.
    text = cmcp::redactSecretAssignments(text, placeholder);
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

} // namespace cmcp::reference
