#include "mcp/ToolRegistry.h"

namespace cmcp {

void ToolRegistry::add(ToolDefinition tool)
{
    for (ToolDefinition &existing : m_tools) {
        if (existing.name == tool.name) {
            existing = std::move(tool);
            Q_EMIT changed();
            return;
        }
    }
    m_tools.append(std::move(tool));
    Q_EMIT changed();
}

bool ToolRegistry::remove(const QString &name)
{
    const auto removed =
            m_tools.removeIf([&](const ToolDefinition &tool) { return tool.name == name; });
    if (removed)
        Q_EMIT changed();
    return removed > 0;
}

const ToolDefinition *ToolRegistry::find(const QString &name) const
{
    for (const ToolDefinition &tool : m_tools) {
        if (tool.name == name)
            return &tool;
    }
    return nullptr;
}

} // namespace cmcp
