#pragma once

#include "common/AdminSettingRecords.h"
#include "base/LiveSettings.h"
#include "common/Settings.h"

#include <QList>
#include <QObject>

namespace cmcp {

// The daemon's settings as the admin channel sees and changes them. A change is validated with
// the start-up rules (Settings::set) and by building the new policy of every tool that reads it
// live (LiveSettings), persisted atomically to the custom env file so that a restart keeps it,
// and only then installed. Nothing changes when any step fails.
class AdminSettings : public QObject
{
    Q_OBJECT
public:
    AdminSettings(Settings settings, QString customEnvFile, QObject *parent = nullptr);

    const Settings &settings() const { return m_settings; }
    const QString &customEnvFile() const { return m_customEnvFile; }

    // A setting named by no entry is stored and reported as needing a restart.
    void addLive(const LiveSettings &live);
    void addLive(const QStringList &names, LiveSettings::Prepare prepare);
    bool isAppliedLive(const QString &name) const;

    // Every setting as the admin channel shows it, in table order.
    QList<admin::SettingRecord> describe() const;
    admin::SettingRecord describe(const SettingSpec &spec) const;

    struct Outcome
    {
        QString error; // empty on success
        bool appliedLive = false;
        QString note; // e.g. "the environment sets it too, and wins at the next start"
    };
    Outcome change(const QString &name, const QString &value);

    // Replaces (or appends) NAME=value in the env file text, keeping every other line.
    static QString withAssignment(const QString &fileText, const QString &name,
                                  const QString &value);
    // Temporary file, fsync, rename, then fsync of the directory. "" or the error.
    static QString writeAtomically(const QString &path, const QByteArray &content);

Q_SIGNALS:
    void settingChanged(const cmcp::admin::SettingRecord &setting);

private:
    Settings m_settings;
    QString m_customEnvFile;
    QList<LiveSettings::Entry> m_live;
};

} // namespace cmcp
