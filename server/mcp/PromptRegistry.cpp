#include "mcp/PromptRegistry.h"

namespace cmcp {

void PromptRegistry::add(PromptDefinition prompt)
{
    m_prompts.append(std::move(prompt));
    Q_EMIT listChanged();
}

const PromptDefinition *PromptRegistry::find(const QString &name) const
{
    for (const PromptDefinition &prompt : m_prompts) {
        if (prompt.name == name)
            return &prompt;
    }
    return nullptr;
}

} // namespace cmcp
