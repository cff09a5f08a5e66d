#pragma once

#include "common/SettingsTable.h"

#include <QList>
#include <QPair>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// Where a value came from, lowest precedence first.
enum class SettingOrigin {
    BuiltIn,
    DefaultFile,
    CustomFile,
    Environment,
    CommandLine,
    AdminConsole
};

// "built-in default", "default file", "custom file", "environment", "command line", "admin
// console".
QString originName(SettingOrigin origin);

struct SettingsSources
{
    QString defaultEnvFile; // optional: skipped when empty or missing
    QString customEnvFile; // optional unless customEnvFileRequired
    bool customEnvFileRequired = false; // given with --config: unreadable is an error
    QProcessEnvironment environment; // only the table's names are consulted
    QList<QPair<QString, QString>> commandLine;
};

// The effective settings, every value checked against the settings table.
// Values are stored trimmed; accessors parse them according to their type.
// Asking for a name the table lacks, or with the wrong type, is a
// programming error and ends the program with qFatal.
class Settings
{
public:
    // Layers, each overriding the previous: built-in defaults < default env
    // file < custom env file < process environment < command line. On error
    // returns nullopt and one line naming the variable, the value, where it
    // came from and what is allowed.
    static std::optional<Settings> load(const SettingsSources &sources, QString *error);

    // The raw (trimmed) value; for LOG_LEVEL the effective one (see DEBUG).
    QString text(QStringView name) const;
    qint64 integer(QStringView name) const;
    bool flag(QStringView name) const;
    // Comma-separated, items trimmed, empty items dropped.
    QStringList list(QStringView name) const;
    SettingOrigin origin(QStringView name) const;

    // One "NAME=value   # origin" line per setting in table order, the origin
    // followed by file:line for file values; set secrets show as ********.
    // Values that need it are quoted, so the output reads back as an env file.
    QString printConfig() const;

    // Validates one change and the cross-setting rules, then applies it;
    // nothing changes on error. Whether a setting may change while running
    // (SettingSpec::liveChangeable) is the caller's decision.
    bool set(QStringView name, const QString &rawValue, SettingOrigin origin, QString *error);

    // "" when `raw` is a valid value of `spec`, otherwise what is allowed,
    // e.g. "must be an integer between 1 and 3600".
    static QString validateValue(const SettingSpec &spec, const QString &raw);

private:
    struct Value
    {
        QString text;
        SettingOrigin origin = SettingOrigin::BuiltIn;
        QString location; // file:line for values from env files
    };

    Settings();

    bool assign(const SettingSpec &spec, const QString &rawValue, SettingOrigin origin,
                const QString &location, QString *error);
    bool applyFile(const QString &path, SettingOrigin origin, QString *error);
    QString crossSettingError() const;
    bool debugLowersLogLevel() const;
    QString describe(const SettingSpec &spec) const;
    const Value &value(QStringView name, SettingType type) const;
    const Value &value(QStringView name) const;

    QList<Value> m_values; // parallel to settingSpecs()
};

} // namespace cmcp
