#pragma once

#include "common/AdminSettingRecords.h"

#include <QHash>
#include <QWidget>

class QLabel;
class QVBoxLayout;

namespace cmcp {

class ConsoleSession;

// The daemon's settings, grouped as in the settings table, each with its help, where its value
// came from, and whether a change applies now or after a restart. A value is checked as it is
// typed with the start-up rules (Settings::validateValue) and the daemon's verdict on Apply is
// shown at the field.
class SettingsEditor : public QWidget
{
    Q_OBJECT
public:
    explicit SettingsEditor(ConsoleSession &session, QWidget *parent = nullptr);

private:
    struct Field
    {
        QWidget *editor = nullptr;
        QLabel *origin = nullptr;
        QLabel *message = nullptr;
        QString shownValue;
    };
    void rebuild();
    void update();
    QWidget *makeEditor(const admin::SettingRecord &setting);
    QString editorValue(const QString &name) const;
    void setEditorValue(const QString &name, const QString &value);
    void showMessage(const QString &name, const QString &text, bool isError);
    void apply(const QString &name);

    ConsoleSession &m_session;
    QVBoxLayout *m_groups = nullptr;
    QHash<QString, Field> m_fields;
};

} // namespace cmcp
