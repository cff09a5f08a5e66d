#include "mcp/McpServer.h"

#include "mcp/methods/JsonFields.h"

#include <QJsonArray>

namespace cmcp {

void McpServer::addPromptMethods()
{
    addMethod(QStringLiteral("prompts/list"), &McpServer::listPrompts, schema(CursorOnlySchema));
    addMethod(QStringLiteral("prompts/get"), &McpServer::getPrompt,
              schema(R"({"type":"object","required":["name"],"properties":{"name":{"type":"string"},
            "arguments":{"type":"object","additionalProperties":{"type":"string"}}}})"));
    acceptClientAnswers(QStringLiteral("prompts/get"));
}

void McpServer::listPrompts(const Request &request)
{
    QJsonArray items;
    for (const PromptDefinition &prompt : m_prompts.prompts()) {
        QJsonObject object{{QLatin1String("name"), prompt.name}};
        insertIfSet(object, "title", prompt.title);
        insertIfSet(object, "description", prompt.description);
        QJsonArray arguments;
        for (const PromptArgument &argument : prompt.arguments) {
            QJsonObject a{{QLatin1String("name"), argument.name},
                          {QLatin1String("required"), argument.required}};
            insertIfSet(a, "description", argument.description);
            arguments.append(a);
        }
        if (!arguments.isEmpty())
            object.insert(QLatin1String("arguments"), arguments);
        items.append(object);
    }
    paginate(request, items, QStringLiteral("prompts"));
}

void McpServer::getPrompt(const Request &request)
{
    const QString name = request.params.value(QLatin1String("name")).toString();
    const PromptDefinition *prompt = m_prompts.find(name);
    if (!prompt) {
        request.fail(jsonrpc::InvalidParams, QStringLiteral("unknown prompt: %1").arg(name));
        return;
    }
    QHash<QString, QString> arguments;
    const QJsonObject given = request.params.value(QLatin1String("arguments")).toObject();
    for (auto it = given.begin(); it != given.end(); ++it)
        arguments.insert(it.key(), it.value().toString());
    for (const PromptArgument &argument : prompt->arguments) {
        if (argument.required && !arguments.contains(argument.name)) {
            request.fail(
                    jsonrpc::InvalidParams,
                    QStringLiteral("params.arguments: missing required argument '%1' of prompt %2")
                            .arg(argument.name, name));
            return;
        }
    }
    auto render = [request, prompt = *prompt, arguments](const QJsonObject &answers) {
        QJsonObject result{{QLatin1String("messages"), prompt.render(arguments, answers)}};
        insertIfSet(result, "description", prompt.description);
        request.reply(result);
    };
    if (prompt->input.isEmpty())
        return render({});
    if (request.session->isStateless()) {
        const QJsonObject binding = stateBinding(request, name, given);
        const std::optional<QJsonObject> answers = clientAnswers(request, binding);
        if (answers && !replyInputRequired(request, prompt->input, *answers, binding))
            render(*answers);
        return;
    }
    askInTurn(request, prompt->input, {}, render);
}

} // namespace cmcp
