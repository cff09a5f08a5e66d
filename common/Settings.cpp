#include "common/Settings.h"

#include "common/EnvFile.h"

#include <QFileInfo>

#include <algorithm>

namespace cmcp {

namespace {

const QString maskedSecret = QStringLiteral("********");

qsizetype specIndex(const SettingSpec &spec)
{
    return &spec - settingSpecs().constData();
}

std::optional<qint64> parseInteger(const QString &text)
{
    qsizetype digitsStart = (text.startsWith(u'+') || text.startsWith(u'-')) ? 1 : 0;
    if (text.size() == digitsStart)
        return std::nullopt;
    for (qsizetype i = digitsStart; i < text.size(); ++i) {
        if (text.at(i) < u'0' || text.at(i) > u'9')
            return std::nullopt;
    }
    bool ok = false;
    const qint64 number = text.toLongLong(&ok, 10);
    return ok ? std::optional<qint64>(number) : std::nullopt;
}

std::optional<bool> parseBoolean(const QString &text)
{
    const QString lower = text.toLower();
    if (lower == u"true" || lower == u"1" || lower == u"yes" || lower == u"on")
        return true;
    if (lower == u"false" || lower == u"0" || lower == u"no" || lower == u"off")
        return false;
    return std::nullopt;
}

QStringList splitList(const QString &text)
{
    QStringList items;
    for (const QString &item : text.split(u',')) {
        const QString trimmed = item.trimmed();
        if (!trimmed.isEmpty())
            items.append(trimmed);
    }
    return items;
}

QString quotedIfNeeded(const QString &value)
{
    const bool needsQuotes = std::any_of(value.cbegin(), value.cend(), [](QChar c) {
        return c.isSpace() || c == u'#' || c == u'"' || c == u'\'';
    });
    if (!needsQuotes)
        return value;
    const QChar quote = value.contains(u'"') ? u'\'' : u'"';
    return quote + value + quote;
}

int editDistance(QStringView a, QStringView b)
{
    QList<int> previous(b.size() + 1);
    QList<int> current(b.size() + 1);
    for (qsizetype j = 0; j <= b.size(); ++j)
        previous[j] = int(j);
    for (qsizetype i = 1; i <= a.size(); ++i) {
        current[0] = int(i);
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const int substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
        }
        std::swap(previous, current);
    }
    return previous[b.size()];
}

// " (did you mean BASH_TIMEOUT_MAX?)" for a near miss, "" otherwise.
QString suggestionFor(const QString &unknownName)
{
    const SettingSpec *best = nullptr;
    int bestDistance = 3;
    for (const SettingSpec &spec : settingSpecs()) {
        const QString name = QString::fromLatin1(spec.name);
        const int distance = name.compare(unknownName, Qt::CaseInsensitive) == 0
                ? 0
                : editDistance(name, unknownName);
        if (distance < bestDistance) {
            best = &spec;
            bestDistance = distance;
        }
    }
    return best ? QStringLiteral(" (did you mean %1?)").arg(QLatin1StringView(best->name))
                : QString();
}

bool isVerboseLogLevel(const QString &level)
{
    return level.compare(u"trace", Qt::CaseInsensitive) == 0
            || level.compare(u"debug", Qt::CaseInsensitive) == 0;
}

} // namespace

QString originName(SettingOrigin origin)
{
    switch (origin) {
    case SettingOrigin::BuiltIn:
        return QStringLiteral("built-in default");
    case SettingOrigin::DefaultFile:
        return QStringLiteral("default file");
    case SettingOrigin::CustomFile:
        return QStringLiteral("custom file");
    case SettingOrigin::Environment:
        return QStringLiteral("environment");
    case SettingOrigin::CommandLine:
        return QStringLiteral("command line");
    case SettingOrigin::AdminConsole:
        return QStringLiteral("admin console");
    }
    return {};
}

Settings::Settings()
{
    const QList<SettingSpec> &specs = settingSpecs();
    m_values.reserve(specs.size());
    for (const SettingSpec &spec : specs)
        m_values.append({QString::fromUtf8(spec.defaultValue), SettingOrigin::BuiltIn, {}});
}

std::optional<Settings> Settings::load(const SettingsSources &sources, QString *error)
{
    Settings settings;
    if (!sources.defaultEnvFile.isEmpty() && QFileInfo::exists(sources.defaultEnvFile)
        && !settings.applyFile(sources.defaultEnvFile, SettingOrigin::DefaultFile, error)) {
        return std::nullopt;
    }
    if (!sources.customEnvFile.isEmpty()
        && (sources.customEnvFileRequired || QFileInfo::exists(sources.customEnvFile))
        && !settings.applyFile(sources.customEnvFile, SettingOrigin::CustomFile, error)) {
        return std::nullopt;
    }
    for (const SettingSpec &spec : settingSpecs()) {
        const QString name = QString::fromLatin1(spec.name);
        if (sources.environment.contains(name)
            && !settings.assign(spec, sources.environment.value(name), SettingOrigin::Environment,
                                {}, error)) {
            return std::nullopt;
        }
    }
    for (const auto &[name, rawValue] : sources.commandLine) {
        const SettingSpec *spec = findSettingSpec(name);
        if (!spec) {
            if (error)
                *error = QStringLiteral("unknown setting \"%1\" (from command line)%2")
                                 .arg(name, suggestionFor(name));
            return std::nullopt;
        }
        if (!settings.assign(*spec, rawValue, SettingOrigin::CommandLine, {}, error))
            return std::nullopt;
    }
    if (const QString crossError = settings.crossSettingError(); !crossError.isEmpty()) {
        if (error)
            *error = crossError;
        return std::nullopt;
    }
    return settings;
}

bool Settings::applyFile(const QString &path, SettingOrigin origin, QString *error)
{
    const auto assignments = EnvFile::read(path, error);
    if (!assignments)
        return false;
    for (const EnvAssignment &assignment : *assignments) {
        const QString location = path + u':' + QString::number(assignment.line);
        const SettingSpec *spec = findSettingSpec(assignment.name);
        if (!spec) {
            if (error) {
                *error = QStringLiteral("%1: unknown setting \"%2\"%3")
                                 .arg(location, assignment.name, suggestionFor(assignment.name));
            }
            return false;
        }
        if (!assign(*spec, assignment.value, origin, location, error))
            return false;
    }
    return true;
}

bool Settings::assign(const SettingSpec &spec, const QString &rawValue, SettingOrigin origin,
                      const QString &location, QString *error)
{
    if (const QString problem = validateValue(spec, rawValue); !problem.isEmpty()) {
        if (error) {
            *error = QStringLiteral("%1=\"%2\" (from %3): %4")
                             .arg(QLatin1StringView(spec.name),
                                  spec.secret ? maskedSecret : rawValue,
                                  location.isEmpty() ? originName(origin) : location, problem);
        }
        return false;
    }
    m_values[specIndex(spec)] = {rawValue.trimmed(), origin, location};
    return true;
}

QString Settings::validateValue(const SettingSpec &spec, const QString &raw)
{
    const QString value = raw.trimmed();
    switch (spec.type) {
    case SettingType::Text:
        if (spec.required && value.isEmpty())
            return QStringLiteral("must not be empty");
        return {};
    case SettingType::Integer: {
        const auto number = parseInteger(value);
        if (!number || *number < spec.minimum || *number > spec.maximum)
            return QStringLiteral("must be an integer between %1 and %2")
                    .arg(spec.minimum)
                    .arg(spec.maximum);
        return {};
    }
    case SettingType::Boolean:
        if (!parseBoolean(value))
            return QStringLiteral("must be true or false (also accepted: 1/0, yes/no, on/off)");
        return {};
    case SettingType::List:
        return {};
    case SettingType::Choice:
        if (!spec.choices.contains(value, Qt::CaseInsensitive))
            return QStringLiteral("must be one of ") + spec.choices.join(QStringLiteral(", "));
        return {};
    }
    return {};
}

QString Settings::describe(const SettingSpec &spec) const
{
    const Value &v = m_values.at(specIndex(spec));
    const QString shown = spec.secret && !v.text.isEmpty() ? maskedSecret : v.text;
    return QStringLiteral("%1=\"%2\" (from %3)")
            .arg(QLatin1StringView(spec.name), shown,
                 v.location.isEmpty() ? originName(v.origin) : v.location);
}

QString Settings::crossSettingError() const
{
    const auto spec = [](QStringView name) -> const SettingSpec & {
        return *findSettingSpec(name);
    };
    for (const auto &[lower, upper] :
         {std::pair<QStringView, QStringView>{u"BASH_TIMEOUT_DEFAULT", u"BASH_TIMEOUT_MAX"},
          std::pair<QStringView, QStringView>{u"PYTHON_TIMEOUT_DEFAULT", u"PYTHON_TIMEOUT_MAX"}}) {
        if (integer(lower) > integer(upper))
            return describe(spec(lower)) + QStringLiteral(": must not exceed ")
                    + describe(spec(upper));
    }
    // The jail accepts ids up to 4294967293 ((uid_t)-1 and -2 mean "unchanged" and "overflow").
    if (integer(u"SANDBOX_UID_BASE") + integer(u"SANDBOX_UID_COUNT") - 1 > 4294967293)
        return describe(spec(u"SANDBOX_UID_BASE")) + QStringLiteral(" with ")
                + describe(spec(u"SANDBOX_UID_COUNT"))
                + QStringLiteral(": the last uid of the pool would be above 4294967293");
    // 0 stands for "the base"; any other gid below 1000 would be a system group.
    if (const qint64 gid = integer(u"SANDBOX_GID"); gid != 0 && gid < 1000)
        return describe(spec(u"SANDBOX_GID"))
                + QStringLiteral(": must be 0 (the same as SANDBOX_UID_BASE) or at least 1000");
    // The workspaces' owner on disk is no job's uid, nor a system account's.
    // Nor the browser worker's, the first uid after the pool.
    const qint64 poolEnd = integer(u"SANDBOX_UID_BASE") + integer(u"SANDBOX_UID_COUNT");
    if (const qint64 owner = integer(u"SANDBOX_WORKSPACE_UID");
        owner != 0 && (owner < 1000 || (owner >= integer(u"SANDBOX_UID_BASE") && owner <= poolEnd)))
        return describe(spec(u"SANDBOX_WORKSPACE_UID"))
                + QStringLiteral(": must be 0, or at least 1000 and neither in the pool nor the "
                                 "browser worker's (SANDBOX_UID_BASE .. SANDBOX_UID_BASE + "
                                 "SANDBOX_UID_COUNT)");
    // A file_write carrying a file of the largest allowed size must fit in a request.
    if (integer(u"MCP_MAX_BODY_MB") <= integer(u"FILE_MAX_SIZE_MB"))
        return describe(spec(u"MCP_MAX_BODY_MB")) + QStringLiteral(": must be greater than ")
                + describe(spec(u"FILE_MAX_SIZE_MB"));
    return {};
}

// DEBUG=true means "show me more" unless the user chose a level: values from
// the built-in table or the shipped default file are not the user's choice.
bool Settings::debugLowersLogLevel() const
{
    const Value &level = value(u"LOG_LEVEL", SettingType::Choice);
    return flag(u"DEBUG") && level.origin <= SettingOrigin::DefaultFile
            && !isVerboseLogLevel(level.text);
}

const Settings::Value &Settings::value(QStringView name) const
{
    const SettingSpec *spec = findSettingSpec(name);
    if (!spec)
        qFatal("Settings: no setting named %s in the settings table", qPrintable(name.toString()));
    return m_values.at(specIndex(*spec));
}

const Settings::Value &Settings::value(QStringView name, SettingType type) const
{
    const Value &v = value(name);
    if (findSettingSpec(name)->type != type)
        qFatal("Settings: setting %s read as the wrong type", qPrintable(name.toString()));
    return v;
}

QString Settings::text(QStringView name) const
{
    if (name == u"LOG_LEVEL" && debugLowersLogLevel())
        return QStringLiteral("debug");
    return value(name).text;
}

qint64 Settings::integer(QStringView name) const
{
    // Stored values were validated, so parsing cannot fail.
    return parseInteger(value(name, SettingType::Integer).text).value_or(0);
}

bool Settings::flag(QStringView name) const
{
    return parseBoolean(value(name, SettingType::Boolean).text).value_or(false);
}

QStringList Settings::list(QStringView name) const
{
    return splitList(value(name, SettingType::List).text);
}

SettingOrigin Settings::origin(QStringView name) const
{
    if (name == u"LOG_LEVEL" && debugLowersLogLevel())
        return value(u"DEBUG").origin;
    return value(name).origin;
}

QString Settings::printConfig() const
{
    const QList<SettingSpec> &specs = settingSpecs();
    QStringList assignments;
    QStringList comments;
    qsizetype width = 0;
    for (const SettingSpec &spec : specs) {
        const QString name = QString::fromLatin1(spec.name);
        const Value &v = m_values.at(specIndex(spec));
        const QString shown =
                spec.secret && !v.text.isEmpty() ? maskedSecret : quotedIfNeeded(text(name));
        QString comment = originName(origin(name));
        if (name == u"LOG_LEVEL" && debugLowersLogLevel())
            comment += QStringLiteral(" (lowered by DEBUG=true)");
        else if (!v.location.isEmpty())
            comment += u' ' + v.location;
        assignments.append(name + u'=' + shown);
        comments.append(comment);
        width = std::max(width, assignments.last().size());
    }
    width = std::min<qsizetype>(width, 48);
    QString out;
    for (qsizetype i = 0; i < assignments.size(); ++i)
        out += assignments.at(i).leftJustified(width) + QStringLiteral("   # ") + comments.at(i)
                + u'\n';
    return out;
}

bool Settings::set(QStringView name, const QString &rawValue, SettingOrigin origin, QString *error)
{
    const SettingSpec *spec = findSettingSpec(name);
    if (!spec) {
        if (error)
            *error = QStringLiteral("unknown setting \"%1\"").arg(name);
        return false;
    }
    Settings changed = *this;
    if (!changed.assign(*spec, rawValue, origin, {}, error))
        return false;
    if (const QString crossError = changed.crossSettingError(); !crossError.isEmpty()) {
        if (error)
            *error = crossError;
        return false;
    }
    *this = std::move(changed);
    return true;
}

} // namespace cmcp
