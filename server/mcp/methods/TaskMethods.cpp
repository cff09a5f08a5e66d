#include "mcp/McpServer.h"

#include "mcp/methods/JsonFields.h"

#include <spdlog/spdlog.h>

namespace cmcp {

void McpServer::addTaskMethods()
{
    const char *taskIdOnly =
            R"({"type":"object","required":["taskId"],"properties":{"taskId":{"type":"string"}}})";
    addMethod(QStringLiteral("tasks/get"), &McpServer::getTask, schema(taskIdOnly), Era::Modern);
    addMethod(QStringLiteral("tasks/cancel"), &McpServer::cancelTask, schema(taskIdOnly),
              Era::Modern);
    addMethod(
            QStringLiteral("tasks/update"), &McpServer::updateTask,
            schema(R"({"type":"object","required":["taskId"],"properties":{"taskId":{"type":"string"},
            "inputResponses":{"type":"object","additionalProperties":{"type":"object"}}}})"),
            Era::Modern);
}

void McpServer::startTask(const Request &request, const ToolDefinition &tool,
                          const QJsonObject &answers)
{
    const QJsonObject arguments = request.params.value(QLatin1String("arguments")).toObject();
    // No tool runs until the answers are in: the task's call is what is recorded.
    if (replyInputRequired(request, tool.inputBeforeTask, answers,
                           stateBinding(request, tool.name, arguments)))
        return;
    const Principal &principal = request.session->principal();
    const QString owner = Session::ownerKey(principal);
    if (const QString refusal = m_tasks->refusal(owner, principal.name()); !refusal.isEmpty()) {
        request.fail(jsonrpc::RequestFailed, refusal);
        return;
    }
    QString unrecorded;
    Task *created = m_tasks->create(owner, tool.name, &unrecorded);
    if (!created) {
        spdlog::error("task of {}: {}", tool.name.toStdString(), unrecorded.toStdString());
        request.fail(jsonrpc::InternalError,
                     QStringLiteral("the task could not be started: %1").arg(unrecorded));
        return;
    }
    Task &task = *created;
    auto session =
            std::make_shared<Session>(owner, request.session->transportName(), nullptr, principal);
    session->setNegotiated(request.session->protocolVersion(), request.session->clientInfo());
    session->makeStateless(tasks::withoutExtension(request.session->clientCapabilities()));
    task.call = session;
    const QString taskId = task.id;
    session->setTaskId(taskId);
    session->setInputAnswers(answers);
    session->setInputParking(
            [store = std::weak_ptr<TaskStore>(m_tasks),
             taskId](const QString &key, const QJsonObject &question, ClientReply reply) {
                if (const auto tasks = store.lock())
                    tasks->park(taskId, key, question, std::move(reply));
                else
                    reply({}, QStringLiteral("the server is shutting down"));
            });
    spdlog::info("task {} of {}: {}", taskId.toStdString(), principal.name().toStdString(),
                 tool.name.toStdString());

    jsonrpc::Message call;
    call.kind = jsonrpc::MessageKind::Request;
    call.id = taskId;
    call.method = request.method;
    call.params = request.params;
    dispatchDetached(session, call, std::make_shared<TaskExchange>(m_tasks, taskId));
    // The call's start is recorded by now; the client learns of the task once that record is
    // durable, as it would learn of a result.
    afterRecordsDurable([request, tasks = m_tasks, taskId, owner] {
        const Task *created = tasks->find(taskId, owner);
        QJsonObject result = created ? created->describe(false) : QJsonObject{};
        result.insert(QLatin1String("resultType"), QLatin1String("task"));
        request.reply(result);
    });
}

Task *McpServer::requestedTask(const Request &request)
{
    if (!tasks::declared(request.session->clientCapabilities())) {
        request.fail(jsonrpc::MissingRequiredClientCapability,
                     QStringLiteral("%1 needs the extension %2, which this request's _meta does "
                                    "not declare")
                             .arg(request.method, QLatin1String(tasks::ExtensionId)),
                     tasks::requiredCapabilityData());
        return nullptr;
    }
    const QString id = request.params.value(QLatin1String("taskId")).toString();
    Task *task = m_tasks->find(id, Session::ownerKey(request.session->principal()));
    if (!task)
        request.fail(jsonrpc::InvalidParams,
                     QStringLiteral("params.taskId: unknown task %1").arg(id),
                     QJsonObject{{QLatin1String("taskId"), id}});
    return task;
}

void McpServer::getTask(const Request &request)
{
    if (const Task *task = requestedTask(request)) {
        QJsonObject result = task->describe(true);
        result.insert(QLatin1String("resultType"), QLatin1String("complete"));
        request.reply(result);
    }
}

void McpServer::cancelTask(const Request &request)
{
    if (Task *task = requestedTask(request)) {
        m_tasks->cancel(*task, QStringLiteral("the task was cancelled by its client"));
        request.reply(QJsonObject{{QLatin1String("resultType"), QLatin1String("complete")}});
    }
}

void McpServer::updateTask(const Request &request)
{
    Task *task = requestedTask(request);
    if (!task)
        return;
    const QString problem = m_tasks->answer(
            *task, request.params.value(QLatin1String("inputResponses")).toObject());
    if (!problem.isEmpty()) {
        request.fail(jsonrpc::InvalidParams, problem);
        return;
    }
    request.reply(QJsonObject{{QLatin1String("resultType"), QLatin1String("complete")}});
}

} // namespace cmcp
