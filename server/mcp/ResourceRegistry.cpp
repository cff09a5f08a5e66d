#include "mcp/ResourceRegistry.h"

namespace cmcp {

void ResourceRegistry::addResource(ResourceDefinition resource)
{
    m_resources.append(std::move(resource));
    Q_EMIT listChanged();
}

void ResourceRegistry::addTemplate(ResourceTemplateDefinition resourceTemplate)
{
    m_compiled.append(compile(resourceTemplate.uriTemplate));
    m_templates.append(std::move(resourceTemplate));
    Q_EMIT listChanged();
}

void ResourceRegistry::addLister(ResourceLister lister)
{
    m_listers.append(std::move(lister));
    Q_EMIT listChanged();
}

QList<ResourceDefinition> ResourceRegistry::listAll() const
{
    QList<ResourceDefinition> all = m_resources;
    for (const ResourceLister &lister : m_listers)
        all.append(lister());
    return all;
}

const ResourceTemplateDefinition *ResourceRegistry::findTemplate(const QString &uriTemplate) const
{
    for (const ResourceTemplateDefinition &t : m_templates) {
        if (t.uriTemplate == uriTemplate)
            return &t;
    }
    return nullptr;
}

std::optional<ResourceRegistry::Match> ResourceRegistry::match(const QString &uri) const
{
    for (const ResourceDefinition &resource : m_resources) {
        if (resource.uri == uri)
            return Match{resource.read, {}};
    }
    for (qsizetype i = 0; i < m_templates.size(); ++i) {
        const QRegularExpressionMatch found = m_compiled[i].pattern.match(uri);
        if (!found.hasMatch())
            continue;
        Match result{m_templates[i].read, {}};
        for (qsizetype v = 0; v < m_compiled[i].variables.size(); ++v)
            result.variables.insert(m_compiled[i].variables[v], found.captured(int(v) + 1));
        return result;
    }
    return std::nullopt;
}

ResourceRegistry::CompiledTemplate ResourceRegistry::compile(const QString &uriTemplate)
{
    static const QRegularExpression expression(QStringLiteral("\\{(\\+?)([A-Za-z0-9_]+)\\}"));
    CompiledTemplate compiled;
    QString pattern = QStringLiteral("^");
    qsizetype last = 0;
    auto it = expression.globalMatch(uriTemplate);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        pattern += QRegularExpression::escape(uriTemplate.mid(last, m.capturedStart() - last));
        pattern += m.captured(1).isEmpty() ? QStringLiteral("([^/]+)") : QStringLiteral("(.+)");
        compiled.variables.append(m.captured(2));
        last = m.capturedEnd();
    }
    pattern += QRegularExpression::escape(uriTemplate.mid(last)) + QLatin1Char('$');
    compiled.pattern = QRegularExpression(pattern);
    return compiled;
}

} // namespace cmcp
