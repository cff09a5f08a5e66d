#include "mcp/McpServer.h"

#include "mcp/methods/JsonFields.h"

#include <QJsonArray>

namespace cmcp {

void McpServer::addCompletionMethods()
{
    addMethod(QStringLiteral("completion/complete"), &McpServer::complete,
              schema(R"({"type":"object","required":["ref","argument"],"properties":{
            "ref":{"type":"object","required":["type"],"properties":{"type":{"enum":["ref/prompt","ref/resource"]},
                   "name":{"type":"string"},"uri":{"type":"string"}}},
            "argument":{"type":"object","required":["name","value"],"properties":{"name":{"type":"string"},"value":{"type":"string"}}},
            "context":{"type":"object"}}})"));
}

void McpServer::complete(const Request &request)
{
    const QJsonObject ref = request.params.value(QLatin1String("ref")).toObject();
    const QJsonObject argument = request.params.value(QLatin1String("argument")).toObject();
    Completer completer;
    if (ref.value(QLatin1String("type")) == QLatin1String("ref/prompt")) {
        const PromptDefinition *prompt =
                m_prompts.find(ref.value(QLatin1String("name")).toString());
        if (!prompt) {
            request.fail(jsonrpc::InvalidParams,
                         QStringLiteral("params.ref.name: unknown prompt '%1'")
                                 .arg(ref.value(QLatin1String("name")).toString()));
            return;
        }
        completer = prompt->complete;
    } else {
        const ResourceTemplateDefinition *resourceTemplate =
                m_resources.findTemplate(ref.value(QLatin1String("uri")).toString());
        if (!resourceTemplate) {
            request.fail(jsonrpc::InvalidParams,
                         QStringLiteral("params.ref.uri: unknown resource template '%1'")
                                 .arg(ref.value(QLatin1String("uri")).toString()));
            return;
        }
        completer = resourceTemplate->complete;
    }
    QStringList values;
    if (completer)
        values = completer(argument.value(QLatin1String("name")).toString(),
                           argument.value(QLatin1String("value")).toString());
    // The specification caps one answer at 100 values.
    constexpr int maxValues = 100;
    const qsizetype total = values.size();
    QJsonObject completion{
            {QLatin1String("values"), QJsonArray::fromStringList(values.mid(0, maxValues))},
            {QLatin1String("total"), double(total)},
            {QLatin1String("hasMore"), total > maxValues}};
    request.reply(QJsonObject{{QLatin1String("completion"), completion}});
}

} // namespace cmcp
