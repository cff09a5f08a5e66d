#include "console/SettingsEditor.h"

#include "console/ConsoleSession.h"
#include "common/Settings.h"
#include "common/SettingsTable.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QIcon>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

namespace cmcp {

SettingsEditor::SettingsEditor(ConsoleSession &session, QWidget *parent)
    : QWidget(parent),
      m_session(session)
{
    auto *scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    auto *content = new QWidget(scroll);
    m_groups = new QVBoxLayout(content);
    m_groups->addStretch();
    scroll->setWidget(content);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);
    connect(&session, &ConsoleSession::configChanged, this, &SettingsEditor::update);
}

QWidget *SettingsEditor::makeEditor(const admin::SettingRecord &setting)
{
    const QString &type = setting.type;
    const QString name = setting.name;
    if (type == u"boolean") {
        auto *box = new QCheckBox(this);
        connect(box, &QCheckBox::toggled, this, [this, name] { showMessage(name, {}, false); });
        return box;
    }
    if (type == u"choice") {
        auto *combo = new QComboBox(this);
        combo->addItems(setting.choices);
        return combo;
    }
    auto *line = new QLineEdit(this);
    line->setClearButtonEnabled(true);
    // The start-up rules, checked as the value is typed.
    connect(line, &QLineEdit::textEdited, this, [this, name](const QString &text) {
        const SettingSpec *spec = findSettingSpec(name);
        showMessage(name, spec ? Settings::validateValue(*spec, text) : QString(), true);
    });
    connect(line, &QLineEdit::returnPressed, this, [this, name] { apply(name); });
    return line;
}

QString SettingsEditor::editorValue(const QString &name) const
{
    QWidget *editor = m_fields.value(name).editor;
    if (auto *box = qobject_cast<QCheckBox *>(editor))
        return box->isChecked() ? QStringLiteral("true") : QStringLiteral("false");
    if (auto *combo = qobject_cast<QComboBox *>(editor))
        return combo->currentText();
    if (auto *line = qobject_cast<QLineEdit *>(editor))
        return line->text();
    return {};
}

void SettingsEditor::setEditorValue(const QString &name, const QString &value)
{
    QWidget *editor = m_fields.value(name).editor;
    if (auto *box = qobject_cast<QCheckBox *>(editor)) {
        const QString lower = value.toLower();
        box->setChecked(lower == u"true" || lower == u"1" || lower == u"yes" || lower == u"on");
    } else if (auto *combo = qobject_cast<QComboBox *>(editor)) {
        const int index = combo->findText(value, Qt::MatchFixedString);
        combo->setCurrentIndex(index >= 0 ? index : 0);
    } else if (auto *line = qobject_cast<QLineEdit *>(editor)) {
        line->setText(value);
    }
}

void SettingsEditor::showMessage(const QString &name, const QString &text, bool isError)
{
    QLabel *label = m_fields.value(name).message;
    if (!label)
        return;
    label->setText(text);
    label->setStyleSheet(isError ? QStringLiteral("color: #c62828")
                                 : QStringLiteral("color: #2e8b3a"));
    label->setVisible(!text.isEmpty());
}

void SettingsEditor::rebuild()
{
    m_fields.clear();
    while (m_groups->count() > 1) {
        QLayoutItem *item = m_groups->takeAt(0);
        delete item->widget();
        delete item;
    }
    QString currentGroup;
    QFormLayout *form = nullptr;
    for (const admin::SettingRecord &setting : m_session.config()) {
        const QString &name = setting.name;
        const QString &group = setting.group;
        if (!form || group != currentGroup) {
            currentGroup = group;
            auto *box = new QGroupBox(group, this);
            form = new QFormLayout(box);
            m_groups->insertWidget(m_groups->count() - 1, box);
        }
        Field field;
        field.editor = makeEditor(setting);
        field.editor->setObjectName(name);
        field.origin = new QLabel(this);
        field.origin->setEnabled(false);
        field.message = new QLabel(this);
        field.message->setObjectName(name + QStringLiteral("-message"));
        field.message->setWordWrap(true);
        field.message->setVisible(false);
        auto *applyButton = new QToolButton(this);
        applyButton->setIcon(QIcon::fromTheme(QStringLiteral("dialog-ok-apply")));
        applyButton->setText(tr("Apply"));
        applyButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        applyButton->setToolTip(tr("Validate, apply and save %1").arg(name));
        connect(applyButton, &QToolButton::clicked, this, [this, name] { apply(name); });

        auto *row = new QWidget(this);
        auto *rowLayout = new QHBoxLayout(row);
        rowLayout->setContentsMargins(0, 0, 0, 0);
        rowLayout->addWidget(field.editor, 1);
        rowLayout->addWidget(field.origin);
        rowLayout->addWidget(applyButton);
        auto *help =
                new QLabel(setting.help + u' ' + tr("Allowed: %1.").arg(setting.allowed), this);
        help->setWordWrap(true);
        help->setEnabled(false);
        auto *cell = new QWidget(this);
        auto *cellLayout = new QVBoxLayout(cell);
        cellLayout->setContentsMargins(0, 0, 0, 4);
        cellLayout->addWidget(row);
        cellLayout->addWidget(field.message);
        cellLayout->addWidget(help);
        auto *label = new QLabel(name, this);
        label->setToolTip(setting.help);
        label->setBuddy(field.editor);
        form->addRow(label, cell);
        m_fields.insert(name, field);
    }
}

void SettingsEditor::update()
{
    bool sameNames = m_fields.size() == m_session.config().size();
    for (const admin::SettingRecord &setting : m_session.config())
        sameNames = sameNames && m_fields.contains(setting.name);
    if (!sameNames)
        rebuild();
    for (const admin::SettingRecord &setting : m_session.config()) {
        const QString &name = setting.name;
        Field &field = m_fields[name];
        const QString &shown = setting.value;
        // A value being edited is left alone unless the daemon's value changed underneath.
        if (field.shownValue != shown || !field.editor->hasFocus())
            setEditorValue(name, shown);
        field.shownValue = shown;
        field.origin->setText(setting.origin + (setting.live ? tr(" · live") : tr(" · restart")));
    }
}

void SettingsEditor::apply(const QString &name)
{
    const QString value = editorValue(name);
    if (const SettingSpec *spec = findSettingSpec(name)) {
        if (const QString problem = Settings::validateValue(*spec, value); !problem.isEmpty()) {
            showMessage(name, problem, true);
            return;
        }
    }
    m_session.setSetting(name, value,
                         [self = QPointer<SettingsEditor>(this), name](const QString &error,
                                                                       const QString &note) {
                             if (self)
                                 self->showMessage(name, error.isEmpty() ? note : error,
                                                   !error.isEmpty());
                         });
}

} // namespace cmcp
