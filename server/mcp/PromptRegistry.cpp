#include "mcp/PromptRegistry.h"

namespace cmcp {

void PromptRegistry::add(PromptDefinition prompt)
{
    m_prompts.append(std::move(prompt));
    Q_EMIT listChanged();
}

bool PromptRegistry::remove(const QString &name)
{
    const qsizetype removed = m_prompts.removeIf(
            [&name](const PromptDefinition &prompt) { return prompt.name == name; });
    if (removed > 0)
        Q_EMIT listChanged();
    return removed > 0;
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
