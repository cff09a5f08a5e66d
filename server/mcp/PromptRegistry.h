#pragma once

#include "mcp/ResourceRegistry.h"

#include <QHash>
#include <QJsonArray>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>

namespace cmcp {

struct PromptArgument
{
    QString name;
    QString description;
    bool required = false;
};

struct PromptDefinition
{
    QString name;
    QString title;
    QString description;
    QList<PromptArgument> arguments;
    // Returns the prompt's messages for arguments that are already checked for presence.
    std::function<QJsonArray(const QHash<QString, QString> &arguments)> render;
    Completer complete;
};

class PromptRegistry : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    void add(PromptDefinition prompt);
    const PromptDefinition *find(const QString &name) const;
    const QList<PromptDefinition> &prompts() const { return m_prompts; }

Q_SIGNALS:
    void listChanged();

private:
    QList<PromptDefinition> m_prompts;
};

} // namespace cmcp
