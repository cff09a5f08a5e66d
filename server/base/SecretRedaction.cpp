#include "base/SecretRedaction.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <string>
#include <vector>
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
        m_assignment = any({"token", "pass", "pwd", "secret", "key", "credential"});
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

// A name as the assignment pattern finds it ("DB_PASS", "--api-key"), lowercased. The Kelvin sign
// and the long s, which the case-insensitive pattern matches as k and s, are read as those
// letters.
std::string foldedName(QStringView name)
{
    std::string folded;
    folded.reserve(size_t(name.size()));
    for (const QChar c : name) {
        const char16_t unit = c.unicode();
        if (unit == 0x212A)
            folded += 'k';
        else if (unit == 0x017F)
            folded += 's';
        else
            folded += char(unit >= 'A' && unit <= 'Z' ? unit + ('a' - 'A') : unit);
    }
    return folded;
}

// The words of a name, split at '_' and '-'.
std::vector<std::string_view> nameWords(std::string_view name)
{
    std::vector<std::string_view> words;
    size_t start = 0;
    for (size_t i = 0; i <= name.size(); ++i) {
        if (i == name.size() || name[i] == '_' || name[i] == '-') {
            if (i > start)
                words.push_back(name.substr(start, i - start));
            start = i + 1;
        }
    }
    return words;
}

bool containsAny(std::string_view text, std::initializer_list<std::string_view> words)
{
    for (const std::string_view word : words)
        if (text.find(word) != std::string_view::npos)
            return true;
    return false;
}

// Whether a name followed by '=' or ':' says that its value is secret: "PASSWORD", "db_token",
// "AWS_SECRET_ACCESS_KEY", "STRIPE_KEY", "api-key", "DB_PASS", "MYSQL_PWD". "pass" and "pwd" only
// as words of their own, "key" and "pwd" only after a '_': "bypass", "passthrough", "keyboard",
// "monkey", and the shell's "PWD" and "OLDPWD" are kept.
bool assignedNameIsSecret(std::string_view name)
{
    if (containsAny(name,
                    {"token", "password", "passwd", "secret", "credential", "apikey", "api_key",
                     "api-key"}))
        return true;
    for (const std::string_view word : nameWords(name)) {
        if (word == "pass")
            return true;
        const bool afterUnderscore = word.data() > name.data() && word.data()[-1] == '_';
        if (afterUnderscore && (word == "key" || word == "pwd"))
            return true;
    }
    return false;
}

// Whether a flag followed by a space takes a secret ("--password abc", "--api-key abc",
// "--db-pass abc"). Fewer words than an assignment: "--key file" names a file.
bool flagNameIsSecret(std::string_view name)
{
    if (containsAny(name,
                    {"token", "password", "passwd", "secret", "apikey", "api_key", "api-key"}))
        return true;
    for (const std::string_view word : nameWords(name))
        if (word == "pass")
            return true;
    return false;
}

// Whether a name says that its value measures a secret rather than being one ("password_length",
// "max_tokens", "TOKEN_TTL", "PASSWORD_MIN_LENGTH"): a bare number assigned to it is kept.
bool nameIsAMeasure(std::string_view name)
{
    static constexpr std::string_view measures[] = {
            "length", "len",     "size",   "count",      "min",      "max",     "num",
            "ttl",    "timeout", "expiry", "expires",    "lifetime", "age",     "limit",
            "bits",   "bytes",   "rounds", "iterations", "retries",  "attempts"};
    for (const std::string_view word : nameWords(name))
        for (const std::string_view measure : measures)
            if (word == measure)
                return true;
    return false;
}

// A number as a value written without quotes reads, with what may end the statement after it
// ("12;", "1024,", "8)").
bool isDecimalNumber(QStringView value)
{
    qsizetype digits = 0;
    while (digits < value.size() && value[digits] >= u'0' && value[digits] <= u'9')
        ++digits;
    if (digits == 0)
        return false;
    for (const QChar c : value.mid(digits))
        if (!QStringView(u";,)]}").contains(c))
            return false;
    return true;
}

} // namespace

// Secrets written inline in free text, as in a command line or a configuration file. Each keeps
// what names it and loses its value:
// - "Authorization: Bearer abc", "Token abc", "Basic abc" (a scheme and its credentials);
// - "Authorization: abc", "X-Auth: abc", "X-Api-Auth-Key: abc" (headers whose name says auth);
// - "PASSWORD=abc", "DB_PASS=abc", password = "abc", {"api_key": "abc"}, "--api-key abc" (a value
//   assigned to a name that says it is secret; see redactSecretAssignments);
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
    if (words.assignment()) {
        text = redactSecretAssignments(text, placeholder);
        words = PatternWords(text);
    }
    apply(words.urlPassword(), urlPassword, QLatin1StringView("\\1:"), QLatin1StringView("@"));
    apply(words.userPassword(), userPassword, QLatin1StringView("\\1:"));
    apply(words.passwordFlag(), passwordFlag, QLatin1StringView("\\1"));
    return text;
}

// Secrets assigned to a name that says so, as in a shell, a configuration file or a program:
// "PASSWORD=abc", "export API_TOKEN='abc'", "DB_PASS=abc cmd", "MYSQL_PWD=abc", "db_token: abc",
// "--api-key abc", "--password=abc", Python's and its kin's password = "abc", passwd='abc',
// api_key = f"abc", secret_token: str = "abc", {"password": "abc"}, connect(password="abc"),
// os.environ["DB_PASS"] = "abc", token == "abc", a triple-quoted string, a quoted string with
// escaped quotes, and a quoted string never closed (to the end of its line, where a string of
// one line ends, so that an unclosed one cannot hide the next line's assignment). The name and what
// joins it to the value stay; the value, quotes and all, becomes the placeholder. A bare number
// assigned to a measure ("password_length = 12", "max_tokens=1024") is kept, and so is the line
// after a name that ends one ("if not password:" followed by the block it opens).
//
// Every quantifier that meets hostile text is possessive or bounded, and a match may only start
// where a name starts: each name is read a bounded number of times and each value at most twice,
// whatever the text. The pattern finds every name that holds a secret-looking word; whether the
// name really says "secret" is decided in code, where words are easier to read than in a pattern.
QString redactSecretAssignments(QString text, const QString &placeholder)
{
    static const QRegularExpression assignment(
            QString::fromLatin1(
                    // Where a name starts, and only if it holds one of the words.
                    R"((?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*?(?:token|pass|pwd|secret|key|credential)))"
                    // A flag and the spaces before its value (group 1, group 2) ...
                    R"((?|(--?[A-Za-z0-9_-]++)(\h++)(?![=:\s]))"
                    // ... or a name, its closing quote or bracket, an optional type annotation
                    // (": str ="), and '=', ':', ':=' or '=='.
                    R"(|([A-Za-z0-9_-]++)(\\?["']?\]?\h*+)"
                    R"((?::\h*+[A-Za-z_][A-Za-z0-9_.]*+(?:\[[^\]\n=]*+\]++)?\h++=(?!=)|[=:]={0,2}))"
                    R"(\h*+)))"
                    // The value (group 3): a string (with a prefix like r or f, triple-quoted,
                    // with escaped quotes, or never closed: to the end of the text when it is
                    // triple-quoted, to the end of the line otherwise), or a word.
                    R"(((?:[rbuf]{1,2}(?=["']))?)"
                    R"((?:"""[^"]*+(?:"(?!"")[^"]*+)*+(?:"""|$))"
                    R"(|'''[^']*+(?:'(?!'')[^']*+)*+(?:'''|$))"
                    R"(|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"?)"
                    R"(|'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+'?)"
                    R"(|[^\s"']++)))"),
            QRegularExpression::CaseInsensitiveOption);
    QString redacted;
    qsizetype copied = 0;
    qsizetype from = 0;
    // PCRE2 checks that the whole text is valid UTF-16 at each match, which makes many matches in
    // a long text quadratic. Once one match has been found the text has passed that check, and
    // the text does not change.
    QRegularExpression::MatchOptions options = QRegularExpression::NoMatchOption;
    for (;; options = QRegularExpression::DontCheckSubjectStringMatchOption) {
        const QRegularExpressionMatch match =
                assignment.match(text, from, QRegularExpression::NormalMatch, options);
        if (!match.hasMatch())
            break;
        const std::string name = foldedName(match.capturedView(1));
        const bool flag = match.capturedView(2).trimmed().isEmpty();
        const bool secret = flag ? flagNameIsSecret(name) : assignedNameIsSecret(name);
        if (!secret || (isDecimalNumber(match.capturedView(3)) && nameIsAMeasure(name))) {
            // The value may hold an assignment of its own ("echo x PASSWORD=abc").
            from = match.capturedEnd(1);
            continue;
        }
        redacted += QStringView(text).mid(copied, match.capturedEnd(2) - copied);
        redacted += placeholder;
        copied = from = match.capturedEnd(0);
    }
    if (copied == 0)
        return text;
    redacted += QStringView(text).mid(copied);
    return redacted;
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
