#include "common/SecretRedaction.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <string>
#include <string_view>

namespace cmcp {

namespace {

// The text's UTF-16 code units lowercased into `lower`, if they are all ASCII; false otherwise.
bool asciiLowercase(QStringView text, std::string &lower)
{
    lower.resize(size_t(text.size()));
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char16_t unit = text[i].unicode();
        if (unit >= 0x80)
            return false;
        lower[size_t(i)] = char(unit >= 'A' && unit <= 'Z' ? unit + ('a' - 'A') : unit);
    }
    return true;
}

// Which of the words that the patterns below cannot match without a text holds. The patterns
// are case-insensitive, and in UTF mode PCRE2 matches an ASCII letter of a pattern with the
// letters of its case-folding set too (k with the Kelvin sign U+212A, s with the long s U+017F):
// so the words are looked for in ASCII text only, lowercased, and a text with anything else is
// said to hold them all. A pattern whose words are missing cannot match, and is not run.
class PatternWords
{
public:
    explicit PatternWords(QStringView text)
    {
        thread_local std::string lower;
        if (!asciiLowercase(text, lower)) {
            m_all = true;
            return;
        }
        const std::string_view view(lower);
        const auto any = [view](std::initializer_list<std::string_view> words) {
            for (const std::string_view word : words)
                if (view.find(word) != std::string_view::npos)
                    return true;
            return false;
        };
        const bool colon = view.find(':') != std::string_view::npos;
        m_pem = any({"-----begin "});
        m_scheme = any({"bearer", "basic", "digest", "negotiate", "token"});
        m_authHeader = colon && any({"auth"});
        m_assignment = any({"token", "passw", "secret", "key", "credential"});
        m_urlPassword = any({"://"}) && any({"@"});
        m_userPassword = colon && any({"-u"});
        m_passwordFlag = any({"mysql", "mariadb", "sshpass", "redis-cli"});
    }

    bool pem() const { return m_all || m_pem; }
    bool scheme() const { return m_all || m_scheme; }
    bool authHeader() const { return m_all || m_authHeader; }
    bool assignment() const { return m_all || m_assignment; }
    bool urlPassword() const { return m_all || m_urlPassword; }
    bool userPassword() const { return m_all || m_userPassword; }
    bool passwordFlag() const { return m_all || m_passwordFlag; }

private:
    bool m_all = false;
    bool m_pem = false;
    bool m_scheme = false;
    bool m_authHeader = false;
    bool m_assignment = false;
    bool m_urlPassword = false;
    bool m_userPassword = false;
    bool m_passwordFlag = false;
};

} // namespace

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
    // Each pattern runs on what the ones before it left; after one that may have changed the text
    // (the placeholder may hold any word), its words are looked for again. Most text holds none:
    // a command line, a path, a file name is spared seven regular expressions.
    PatternWords words(text);
    // The replacement is the pattern's kept groups around the placeholder.
    const auto apply = [&](bool needed, const QRegularExpression &pattern, QLatin1StringView before,
                           QLatin1StringView after = {}) {
        if (!needed)
            return;
        text.replace(pattern, before + placeholder + after);
        words = PatternWords(text);
    };
    apply(words.pem(), pem, QLatin1StringView("\\1 "), QLatin1StringView(" \\3"));
    apply(words.scheme(), scheme, QLatin1StringView("\\1 "));
    apply(words.authHeader(), authHeader, QLatin1StringView("\\1"));
    apply(words.assignment(), assignment, QLatin1StringView("\\1"));
    apply(words.urlPassword(), urlPassword, QLatin1StringView("\\1:"), QLatin1StringView("@"));
    apply(words.userPassword(), userPassword, QLatin1StringView("\\1:"));
    apply(words.passwordFlag(), passwordFlag, QLatin1StringView("\\1"));
    return text;
}

bool looksLikeSecretKey(QStringView key)
{
    // "pass" (not only "password"): "passphrase", "passwd", "db_pass".
    static constexpr std::string_view secretWords[] = {
            "token",  "pass",       "secret",  "key",     "auth",
            "cookie", "credential", "private", "session", "signature"};
    // An ASCII name lowercased once and searched for each word; any other is compared as Qt
    // folds case (the Kelvin sign folds to k, the long s to s).
    thread_local std::string lower;
    if (asciiLowercase(key, lower)) {
        for (const std::string_view word : secretWords)
            if (std::string_view(lower).find(word) != std::string_view::npos)
                return true;
        return false;
    }
    for (const std::string_view word : secretWords)
        if (key.contains(QLatin1StringView(word.data(), qsizetype(word.size())),
                         Qt::CaseInsensitive))
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
