#pragma once

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace cmcp {

class ToolCall;

// Hints for clients; set them truthfully, clients use them to decide what needs confirmation.
// Write all four by name, `{.readOnly = true, .destructive = false, …}`: the defaults are the
// specification's (a destructive tool of the open world), which few tools here are.
struct ToolAnnotations
{
    bool readOnly = false;
    bool destructive = true;
    bool idempotent = false;
    bool openWorld = true;
};

// Receives the call with arguments already validated against the input schema, and must
// eventually call ToolCall::finish (unless the call is cancelled). It must not block.
using ToolHandler = std::function<void(const std::shared_ptr<ToolCall> &call)>;

struct ToolDefinition
{
    QString name;
    QString title;
    QString description;
    QJsonObject inputSchema;
    std::optional<QJsonObject> outputSchema;
    ToolAnnotations annotations;
    ToolHandler handler;
};

// The tools a server offers. The MCP core knows tools only through this registry.
class ToolRegistry : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    // Replaces a tool of the same name.
    void add(ToolDefinition tool);
    bool remove(const QString &name);
    const ToolDefinition *find(const QString &name) const;
    const QList<ToolDefinition> &tools() const { return m_tools; }

Q_SIGNALS:
    void changed();

private:
    QList<ToolDefinition> m_tools;
};

} // namespace cmcp
