#include "mcp/PrincipalPolicy.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>

#include <cmath>

namespace cmcp {

namespace {

const QRegularExpression &nameSyntax()
{
    static const QRegularExpression name(QStringLiteral("^[A-Za-z0-9._-]{1,64}$"));
    return name;
}

// Keys a profile may one day hold whose rule goes through the jail's or the gate's policy, which
// this daemon sets for all principals alike: refused rather than silently ignored.
const QHash<QString, QString> &globalOnlyKeys()
{
    static const QHash<QString, QString> keys{
            {QStringLiteral("bash_allowed_commands"), QStringLiteral("BASH_ALLOWED_COMMANDS")},
            {QStringLiteral("job_network"), QStringLiteral("JOB_NETWORK")},
            {QStringLiteral("job_network_allowed_domains"),
             QStringLiteral("JOB_NETWORK_ALLOWED_DOMAINS")},
            {QStringLiteral("web_allowed_domains"), QStringLiteral("WEB_ALLOWED_DOMAINS")},
    };
    return keys;
}

class Parser
{
public:
    Parser(const QString &path) : m_path(path) { m_policy.path = path; }

    std::optional<PrincipalPolicy> run(const QByteArray &text, QString *error)
    {
        const QList<QByteArray> lines = text.split('\n');
        for (qsizetype index = 0; index < lines.size(); ++index) {
            m_line = int(index) + 1;
            if (!readLine(QString::fromUtf8(lines[index]).trimmed()))
                break;
        }
        if (m_error.isEmpty())
            finish();
        if (!m_error.isEmpty()) {
            *error = m_error;
            return std::nullopt;
        }
        return std::move(m_policy);
    }

private:
    enum class Section { None, Profile, Principal };

    // One pass of substitution: a value quoted in `problem` may hold a '%'.
    bool fail(const QString &field, const QString &problem)
    {
        const QString line = QString::number(m_line);
        m_error = field.isEmpty()
                ? QStringLiteral("MCP_POLICY_FILE %1 line %2: %3").arg(m_path, line, problem)
                : QStringLiteral("MCP_POLICY_FILE %1 line %2: %3: %4")
                          .arg(m_path, line, field, problem);
        return false;
    }

    bool readLine(const QString &line)
    {
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            return true;
        if (line.startsWith(QLatin1Char('[')))
            return readHeader(line);
        const qsizetype equals = line.indexOf(QLatin1Char('='));
        if (equals <= 0)
            return fail({},
                        QStringLiteral("expected `[profile NAME]`, `[principal NAME]` or "
                                       "`key = value`"));
        const QString key = line.left(equals).trimmed();
        const QString value = line.mid(equals + 1).trimmed();
        if (m_section == Section::None)
            return fail(key, QStringLiteral("a key outside any [profile] or [principal] section"));
        if (m_keysSeen.contains(key))
            return fail(key, QStringLiteral("set twice in this section"));
        m_keysSeen.insert(key);
        return m_section == Section::Profile ? readProfileKey(key, value)
                                             : readPrincipalKey(key, value);
    }

    bool readHeader(const QString &line)
    {
        static const QRegularExpression header(QStringLiteral("^\\[\\s*(\\S+)\\s+(\\S+)\\s*\\]$"));
        const QRegularExpressionMatch match = header.match(line);
        if (!match.hasMatch())
            return fail({}, QStringLiteral("expected `[profile NAME]` or `[principal NAME]`"));
        if (!closeSection())
            return false;
        const QString kind = match.captured(1);
        const QString name = match.captured(2);
        if (kind != QLatin1String("profile") && kind != QLatin1String("principal"))
            return fail(
                    {},
                    QStringLiteral("unknown section kind '%1' (profile or principal)").arg(kind));
        if (!nameSyntax().match(name).hasMatch())
            return fail(
                    {},
                    QStringLiteral("the name '%1' is not 1 to 64 of A-Z a-z 0-9 . _ -").arg(name));
        m_keysSeen.clear();
        m_sectionLine = m_line;
        if (kind == QLatin1String("profile")) {
            if (name == QLatin1String("default"))
                return fail({},
                            QStringLiteral("the profile 'default' is the global settings and "
                                           "cannot be redefined"));
            if (m_policy.profiles.contains(name))
                return fail({}, QStringLiteral("the profile '%1' appears twice").arg(name));
            m_section = Section::Profile;
            m_profile = Profile{};
            m_profile.name = name;
            return true;
        }
        if (name == QLatin1String("local"))
            return fail({}, QStringLiteral("the name 'local' is kept for clients without a token"));
        if (m_policy.principal(name))
            return fail({}, QStringLiteral("the principal '%1' appears twice").arg(name));
        m_section = Section::Principal;
        m_principal = PolicyPrincipal{};
        m_principal.name = name;
        m_profileLine = 0;
        return true;
    }

    // Ends the section being read: a principal must have a token.
    bool closeSection()
    {
        if (m_section == Section::Profile) {
            m_policy.profiles.insert(m_profile.name, m_profile);
        } else if (m_section == Section::Principal) {
            if (m_principal.digest.isEmpty()) {
                const int line = m_line;
                m_line = m_sectionLine;
                fail(QStringLiteral("[principal %1]").arg(m_principal.name),
                     QStringLiteral("needs token_sha256 or token_file"));
                m_line = line;
                return false;
            }
            m_policy.principals.append(m_principal);
            m_profileLines.append(m_profileLine);
        }
        m_section = Section::None;
        return true;
    }

    bool readInteger(const QString &key, const QString &value, qint64 low, qint64 high, qint64 *out)
    {
        bool ok = false;
        const qint64 number = value.toLongLong(&ok);
        if (!ok || number < low || number > high)
            return fail(key,
                        QStringLiteral("'%1' is not a whole number from %2 to %3")
                                .arg(value, QString::number(low), QString::number(high)));
        *out = number;
        return true;
    }

    bool readProfileKey(const QString &key, const QString &value)
    {
        qint64 number = 0;
        if (key == QLatin1String("tools")) {
            QStringList tools;
            for (const QString &tool : value.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                const QString name = tool.trimmed();
                if (!nameSyntax().match(name).hasMatch())
                    return fail(key, QStringLiteral("'%1' is not a tool name").arg(name));
                tools.append(name);
            }
            m_profile.tools = tools;
            return true;
        }
        if (key == QLatin1String("call_rate"))
            return readCallRate(key, value);
        if (key == QLatin1String("max_background_jobs")) {
            if (!readInteger(key, value, 0, 100000, &number))
                return false;
            m_profile.maxBackgroundJobs = int(number);
            return true;
        }
        if (key == QLatin1String("max_foreground_jobs")) {
            if (!readInteger(key, value, 0, 100000, &number))
                return false;
            m_profile.maxForegroundJobs = int(number);
            return true;
        }
        if (key == QLatin1String("named_workspaces")) {
            if (!readInteger(key, value, 0, 10000, &number))
                return false;
            m_profile.namedWorkspaces = int(number);
            return true;
        }
        if (key == QLatin1String("named_workspace_mb")) {
            if (!readInteger(key, value, 1, 16777216, &number))
                return false;
            m_profile.namedWorkspaceMb = number;
            return true;
        }
        if (const auto global = globalOnlyKeys().constFind(key); global != globalOnlyKeys().cend())
            return fail(key,
                        QStringLiteral("not set per profile by this daemon: %1 applies to "
                                       "every principal")
                                .arg(*global));
        return fail(key,
                    QStringLiteral("unknown key in a profile (tools, call_rate, "
                                   "max_background_jobs, max_foreground_jobs, "
                                   "named_workspaces, named_workspace_mb)"));
    }

    bool readCallRate(const QString &key, const QString &value)
    {
        const QStringList parts = value.split(QLatin1Char(','));
        bool rateOk = false;
        bool burstOk = parts.size() == 1;
        const double perSecond = parts.value(0).trimmed().toDouble(&rateOk);
        double burst = std::max(1.0, std::ceil(perSecond));
        if (parts.size() == 2)
            burst = parts[1].trimmed().toDouble(&burstOk);
        if (parts.size() > 2 || !rateOk || !burstOk || !std::isfinite(perSecond)
            || !std::isfinite(burst) || perSecond <= 0 || perSecond > 1e6 || burst < 1
            || burst > 1e6)
            return fail(key,
                        QStringLiteral("'%1' is not `calls a second[, burst]` with calls a "
                                       "second above 0 and a burst of at least 1")
                                .arg(value));
        m_profile.callRate = CallRate{perSecond, burst};
        return true;
    }

    bool readPrincipalKey(const QString &key, const QString &value)
    {
        static const QRegularExpression hex(QStringLiteral("^[0-9a-fA-F]{64}$"));
        if (key == QLatin1String("token_sha256")) {
            if (m_keysSeen.contains(QStringLiteral("token_file")))
                return fail(key, QStringLiteral("token_file is set already: one of the two"));
            if (!hex.match(value).hasMatch())
                return fail(key, QStringLiteral("not 64 hex digits (sha256sum of the token)"));
            m_principal.digest = QByteArray::fromHex(value.toLatin1());
            return true;
        }
        if (key == QLatin1String("token_file")) {
            if (m_keysSeen.contains(QStringLiteral("token_sha256")))
                return fail(key, QStringLiteral("token_sha256 is set already: one of the two"));
            const QString path = QDir(QFileInfo(m_path).absolutePath()).absoluteFilePath(value);
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly))
                return fail(key, QStringLiteral("%1: %2").arg(path, file.errorString()));
            const QByteArray token = file.read(4096).trimmed();
            if (token.size() < 16)
                return fail(key,
                            QStringLiteral("%1 holds a token of %2 bytes: at least 16 are "
                                           "needed")
                                    .arg(path, QString::number(token.size())));
            m_principal.digest = QCryptographicHash::hash(token, QCryptographicHash::Sha256);
            return true;
        }
        if (key == QLatin1String("profile")) {
            if (!nameSyntax().match(value).hasMatch())
                return fail(key, QStringLiteral("'%1' is not a profile name").arg(value));
            m_principal.profile = value == QLatin1String("default") ? QString() : value;
            m_profileLine = m_line;
            return true;
        }
        return fail(key,
                    QStringLiteral("unknown key in a principal (token_sha256, token_file, "
                                   "profile)"));
    }

    // Profiles may be named before they are defined: checked once all are read.
    void finish()
    {
        ++m_line;
        if (!closeSection())
            return;
        for (qsizetype index = 0; index < m_policy.principals.size(); ++index) {
            const PolicyPrincipal &principal = m_policy.principals[index];
            if (!principal.profile.isEmpty() && !m_policy.profiles.contains(principal.profile)) {
                m_line = m_profileLines[index];
                fail(QStringLiteral("profile"),
                     QStringLiteral("no [profile %1] in this file").arg(principal.profile));
                return;
            }
        }
    }

    const QString m_path;
    PrincipalPolicy m_policy;
    QString m_error;
    int m_line = 0;
    Section m_section = Section::None;
    int m_sectionLine = 0;
    QSet<QString> m_keysSeen;
    Profile m_profile;
    PolicyPrincipal m_principal;
    int m_profileLine = 0;
    QList<int> m_profileLines; // by principal: the line of its `profile`
};

} // namespace

std::optional<PrincipalPolicy> PrincipalPolicy::read(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("MCP_POLICY_FILE %1: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    return parse(file.read(4 * 1024 * 1024), path, error);
}

std::optional<PrincipalPolicy> PrincipalPolicy::parse(const QByteArray &text, const QString &path,
                                                      QString *error)
{
    return Parser(path).run(text, error);
}

const PolicyPrincipal *PrincipalPolicy::principal(const QString &name) const
{
    for (const PolicyPrincipal &each : principals) {
        if (each.name == name)
            return &each;
    }
    return nullptr;
}

} // namespace cmcp
