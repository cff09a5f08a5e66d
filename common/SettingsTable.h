#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>

namespace cmcp {

enum class SettingType { Text, Integer, Boolean, List, Choice };

// One setting: the single place its name, type, default, range and help live.
// --help, the table in docs/configuration.md, config/default.env and the loader all follow it.
struct SettingSpec
{
    const char *name = nullptr;
    SettingType type = SettingType::Text;
    const char *defaultValue = "";
    qint64 minimum = 0; // Integer only, inclusive
    qint64 maximum = 0; // Integer only, inclusive
    QStringList choices; // Choice only, matched case-insensitively
    const char *help = ""; // one sentence: what it does, and its unit
    bool secret = false; // masked by --print-config
    bool liveChangeable = false; // the daemon applies a change without a restart
    bool required = false; // Text only: must not be empty
    const char *group = "";
};

// In documentation order, grouped.
const QList<SettingSpec> &settingSpecs();
// nullptr when no setting has that (case-sensitive) name.
const SettingSpec *findSettingSpec(QStringView name);

// What a value may be, for people: "1..3600", "one of text, json", ...
QString allowedValuesText(const SettingSpec &spec);

// A GitHub table: Name | Default | Allowed | Description, one row per setting.
QString settingsMarkdownTable();
// The settings part of `cmcpd --help`: grouped, names aligned, wrapped at 80 columns.
QString settingsHelpText();

} // namespace cmcp
