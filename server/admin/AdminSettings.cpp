#include "admin/AdminSettings.h"

#include "posix/DirectorySync.h"
#include "base/SecretRedaction.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

namespace {

QString typeName(SettingType type)
{
    switch (type) {
    case SettingType::Text:
        return QStringLiteral("text");
    case SettingType::Integer:
        return QStringLiteral("integer");
    case SettingType::Boolean:
        return QStringLiteral("boolean");
    case SettingType::List:
        return QStringLiteral("list");
    case SettingType::Choice:
        return QStringLiteral("choice");
    }
    return {};
}

// The env file syntax (EnvFile) has no escapes: a value is written bare, or in the one kind of
// quote it does not contain.
std::optional<QString> envFileValue(const QString &value, QString *problem)
{
    if (value.contains(u'\n') || value.contains(u'\r')) {
        *problem = QStringLiteral("a value cannot span lines");
        return std::nullopt;
    }
    const bool plain = !value.isEmpty() && std::none_of(value.cbegin(), value.cend(), [](QChar c) {
        return c.isSpace() || c == u'#' || c == u'"' || c == u'\'';
    });
    if (plain)
        return value;
    if (!value.contains(u'"'))
        return u'"' + value + u'"';
    if (!value.contains(u'\''))
        return u'\'' + value + u'\'';
    *problem =
            QStringLiteral("a value holding both kinds of quote cannot be stored in an env file");
    return std::nullopt;
}

} // namespace

AdminSettings::AdminSettings(Settings settings, QString customEnvFile, QObject *parent)
    : QObject(parent),
      m_settings(std::move(settings)),
      m_customEnvFile(std::move(customEnvFile))
{
}

void AdminSettings::addLive(const LiveSettings &live)
{
    m_live.append(live.entries());
}

void AdminSettings::addLive(const QStringList &names, LiveSettings::Prepare prepare)
{
    m_live.append({names, std::move(prepare)});
}

bool AdminSettings::isAppliedLive(const QString &name) const
{
    return std::any_of(m_live.cbegin(), m_live.cend(), [&name](const LiveSettings::Entry &entry) {
        return entry.names.contains(name);
    });
}

admin::SettingRecord AdminSettings::describe(const SettingSpec &spec) const
{
    const QString name = QString::fromLatin1(spec.name);
    const QString value = m_settings.text(name);
    admin::SettingRecord setting;
    setting.name = name;
    setting.group = QString::fromUtf8(spec.group);
    setting.type = typeName(spec.type);
    setting.value = spec.secret && !value.isEmpty() ? QLatin1String(admin::MaskedValue) : value;
    setting.origin = originName(m_settings.origin(name));
    setting.help = QString::fromUtf8(spec.help);
    setting.allowed = allowedValuesText(spec);
    setting.choices = spec.choices;
    setting.live = isAppliedLive(name);
    setting.secret = spec.secret;
    return setting;
}

QList<admin::SettingRecord> AdminSettings::describe() const
{
    QList<admin::SettingRecord> settings;
    for (const SettingSpec &spec : settingSpecs())
        settings.append(describe(spec));
    return settings;
}

AdminSettings::Outcome AdminSettings::change(const QString &name, const QString &value)
{
    Outcome outcome;
    const SettingSpec *spec = findSettingSpec(name);
    if (!spec) {
        outcome.error = QStringLiteral("unknown setting \"%1\"").arg(name);
        return outcome;
    }
    const auto stored = envFileValue(value.trimmed(), &outcome.error);
    if (!stored)
        return outcome;
    const SettingOrigin previousOrigin = m_settings.origin(name);
    Settings changed = m_settings;
    if (!changed.set(name, value, SettingOrigin::AdminConsole, &outcome.error))
        return outcome;
    // Every policy that reads the setting is built before anything is saved: one that cannot
    // be built refuses the change.
    QList<LiveSettings::Install> installs;
    for (const LiveSettings::Entry &entry : std::as_const(m_live)) {
        if (!entry.names.contains(name))
            continue;
        LiveSettings::Install install = entry.prepare(changed, &outcome.error);
        if (!install) {
            if (outcome.error.isEmpty())
                outcome.error = QStringLiteral("%1 cannot be applied").arg(name);
            return outcome;
        }
        installs.append(std::move(install));
    }

    QString fileText;
    QFile existing(m_customEnvFile);
    if (existing.exists()) {
        if (!existing.open(QIODevice::ReadOnly)) {
            outcome.error = QStringLiteral("cannot read %1: %2")
                                    .arg(m_customEnvFile, existing.errorString());
            return outcome;
        }
        fileText = QString::fromUtf8(existing.readAll());
    }
    if (const QString problem =
                writeAtomically(m_customEnvFile, withAssignment(fileText, name, *stored).toUtf8());
        !problem.isEmpty()) {
        outcome.error = problem;
        return outcome;
    }
    m_settings = std::move(changed);
    for (const LiveSettings::Install &install : std::as_const(installs))
        install();
    outcome.appliedLive = !installs.isEmpty();
    if (previousOrigin == SettingOrigin::Environment
        || previousOrigin == SettingOrigin::CommandLine)
        outcome.note =
                QStringLiteral(
                        "the %1 sets %2 too, and wins over the custom file at the next start")
                        .arg(originName(previousOrigin), name);
    spdlog::info("admin: {} changed from the console ({}), saved in {}", spec->name,
                 outcome.appliedLive ? "applied now" : "applies after a restart",
                 m_customEnvFile.toStdString());
    Q_EMIT settingChanged(describe(*spec));
    return outcome;
}

QString AdminSettings::withAssignment(const QString &fileText, const QString &name,
                                      const QString &value)
{
    const QRegularExpression assignsName(
            QStringLiteral("^\\s*(export\\s+)?%1\\s*=").arg(QRegularExpression::escape(name)));
    QStringList lines = fileText.split(u'\n');
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    bool replaced = false;
    // The last assignment wins when the file is read, so that is the one to replace; earlier
    // ones are dropped so the file does not contradict itself.
    for (qsizetype i = lines.size() - 1; i >= 0; --i) {
        if (!assignsName.match(lines.at(i)).hasMatch())
            continue;
        if (replaced) {
            lines.removeAt(i);
        } else {
            lines[i] = name + u'=' + value;
            replaced = true;
        }
    }
    if (!replaced)
        lines.append(name + u'=' + value);
    return lines.join(u'\n') + u'\n';
}

QString AdminSettings::writeAtomically(const QString &path, const QByteArray &content)
{
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath()))
        return QStringLiteral("cannot create the directory of %1").arg(path);
    // QSaveFile writes a temporary file beside the target, fsyncs it and renames it over.
    // An existing file keeps its permissions; a new one may hold secrets (MCP_AUTH_TOKEN).
    const bool isNew = !info.exists();
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    if (isNew)
        file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    file.write(content);
    if (!file.commit())
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    // The rename itself is durable only once the directory is synced.
    fsyncDirectoryAt(AT_FDCWD, QFile::encodeName(info.absolutePath()).constData());
    return {};
}

} // namespace cmcp
