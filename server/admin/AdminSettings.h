#pragma once

#include "Settings.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPair>

#include <functional>

namespace cmcp {

// The daemon's settings as the admin channel sees and changes them. A change is validated with
// the start-up rules (Settings::set), applied live when an applier is registered for it, and
// persisted atomically to the custom env file so that a restart keeps it. Nothing changes when
// any step fails.
class AdminSettings : public QObject
{
    Q_OBJECT
public:
    AdminSettings(Settings settings, QString customEnvFile, QObject *parent = nullptr);

    const Settings &settings() const { return m_settings; }
    const QString &customEnvFile() const { return m_customEnvFile; }

    // `apply` runs after a change of any of `names` has been validated and persisted; a
    // setting without an applier is stored and reported as needing a restart.
    void addLiveApplier(const QStringList &names, std::function<void(const Settings &)> apply);
    bool isAppliedLive(const QString &name) const;

    // Every setting as a setting object (see AdminProtocol.h), in table order.
    QJsonArray describe() const;
    QJsonObject describe(const SettingSpec &spec) const;

    struct Outcome
    {
        QString error; // empty on success
        bool appliedLive = false;
        QString note; // e.g. "the environment sets it too, and wins at the next start"
    };
    Outcome change(const QString &name, const QString &value);

    // Replaces (or appends) NAME=value in the env file text, keeping every other line.
    static QString withAssignment(const QString &fileText, const QString &name, const QString &value);
    // Temporary file, fsync, rename, then fsync of the directory. "" or the error.
    static QString writeAtomically(const QString &path, const QByteArray &content);

Q_SIGNALS:
    void settingChanged(const QJsonObject &setting);

private:
    Settings m_settings;
    QString m_customEnvFile;
    QList<QPair<QStringList, std::function<void(const Settings &)>>> m_appliers;
};

} // namespace cmcp
