#pragma once

#include "mcp/ClientInput.h"
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
    // Returns the prompt's messages for arguments that are already checked for presence, and
    // the client's answers to `input` by key.
    std::function<QJsonArray(const QHash<QString, QString> &arguments, const QJsonObject &answers)>
            render;
    Completer complete;
    // What the prompt asks its client before it renders: sent to the client in the 2025
    // revisions, an input_required result in the modern era.
    QList<InputRequest> input;
};

class PromptRegistry : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    void add(PromptDefinition prompt);
    bool remove(const QString &name);
    const PromptDefinition *find(const QString &name) const;
    const QList<PromptDefinition> &prompts() const { return m_prompts; }

Q_SIGNALS:
    void listChanged();

private:
    QList<PromptDefinition> m_prompts;
};

} // namespace cmcp
