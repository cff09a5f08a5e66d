#pragma once

#include "mcp/ClientInput.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

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

// Whether a call of the tool may become a task (the Tasks extension): never, when the client
// declared the extension, or only so (a client without it is refused with -32021).
enum class TaskSupport { Forbidden, Optional, Required };

struct ToolDefinition
{
    QString name;
    QString title;
    QString description;
    QJsonObject inputSchema;
    std::optional<QJsonObject> outputSchema;
    ToolAnnotations annotations;
    // Client capabilities the tool cannot work without (sampling, elicitation). A request of
    // the modern era, which declares its client's capabilities itself, is refused with
    // MissingRequiredClientCapability (-32021) before the tool runs when one is not declared.
    QStringList requiredClientCapabilities;
    TaskSupport taskSupport = TaskSupport::Forbidden;
    // Questions a call that becomes a task must have answered first: the tools/call is
    // answered with an input_required result until its retry brings the answers, and only then
    // becomes a task, whose call finds them answered when it asks them.
    QList<InputRequest> inputBeforeTask;
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
