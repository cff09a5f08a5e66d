#include "mcp/McpServer.h"

#include "mcp/methods/JsonFields.h"

#include <QJsonArray>

namespace cmcp {

void McpServer::addResourceMethods()
{
    addMethod(QStringLiteral("resources/list"), &McpServer::listResources,
              schema(CursorOnlySchema));
    addMethod(QStringLiteral("resources/templates/list"), &McpServer::listResourceTemplates,
              schema(CursorOnlySchema));
    addMethod(QStringLiteral("resources/read"), &McpServer::readResource, schema(UriOnlySchema));
    // The modern era has no resource subscriptions of a session: subscriptions/listen has them.
    addMethod(QStringLiteral("resources/subscribe"), &McpServer::subscribe, schema(UriOnlySchema),
              Era::Sessions);
    addMethod(QStringLiteral("resources/unsubscribe"), &McpServer::unsubscribe,
              schema(UriOnlySchema), Era::Sessions);
}

void McpServer::listResources(const Request &request)
{
    QJsonArray items;
    m_resources.setCaller(request.session->id(), request.session->principal());
    const QList<ResourceDefinition> resources = m_resources.listAll();
    m_resources.clearCaller();
    for (const ResourceDefinition &resource : resources) {
        QJsonObject object{{QLatin1String("uri"), resource.uri},
                           {QLatin1String("name"), resource.name}};
        insertIfSet(object, "title", resource.title);
        insertIfSet(object, "description", resource.description);
        insertIfSet(object, "mimeType", resource.mimeType);
        if (resource.size)
            object.insert(QLatin1String("size"), double(*resource.size));
        items.append(object);
    }
    paginate(request, items, QStringLiteral("resources"));
}

void McpServer::listResourceTemplates(const Request &request)
{
    QJsonArray items;
    for (const ResourceTemplateDefinition &resourceTemplate : m_resources.templates()) {
        QJsonObject object{{QLatin1String("uriTemplate"), resourceTemplate.uriTemplate},
                           {QLatin1String("name"), resourceTemplate.name}};
        insertIfSet(object, "title", resourceTemplate.title);
        insertIfSet(object, "description", resourceTemplate.description);
        insertIfSet(object, "mimeType", resourceTemplate.mimeType);
        items.append(object);
    }
    paginate(request, items, QStringLiteral("resourceTemplates"));
}

void McpServer::failResourceNotFound(const Request &request, const QString &uri)
{
    // The modern era reports a missing resource as invalid params; the 2025 revisions had their
    // own code.
    request.fail(request.session->isStateless() ? jsonrpc::InvalidParams
                                                : jsonrpc::ResourceNotFound,
                 QStringLiteral("resource not found: %1").arg(uri),
                 QJsonObject{{QLatin1String("uri"), uri}});
}

void McpServer::readResource(const Request &request)
{
    const QString uri = request.params.value(QLatin1String("uri")).toString();
    const auto match = m_resources.match(uri);
    if (!match)
        return failResourceNotFound(request, uri);
    m_resources.setCaller(request.session->id(), request.session->principal());
    match->read(uri, match->variables, [request](const ResourceReadResult &result) {
        if (result.errorCode == jsonrpc::ResourceNotFound && request.session->isStateless())
            request.fail(jsonrpc::InvalidParams, result.error,
                         QJsonObject{{QLatin1String("uri"),
                                      request.params.value(QLatin1String("uri"))}});
        else if (result.errorCode != 0)
            request.fail(result.errorCode, result.error,
                         QJsonObject{{QLatin1String("uri"),
                                      request.params.value(QLatin1String("uri"))}});
        else
            request.reply(QJsonObject{{QLatin1String("contents"), result.contents}});
    });
    m_resources.clearCaller();
}

void McpServer::subscribe(const Request &request)
{
    const QString uri = request.params.value(QLatin1String("uri")).toString();
    if (!m_resources.match(uri))
        return failResourceNotFound(request, uri);
    request.session->subscriptions().insert(uri);
    request.reply(QJsonObject{});
}

void McpServer::unsubscribe(const Request &request)
{
    request.session->subscriptions().remove(request.params.value(QLatin1String("uri")).toString());
    request.reply(QJsonObject{});
}

} // namespace cmcp
