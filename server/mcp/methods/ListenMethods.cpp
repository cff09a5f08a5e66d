#include "mcp/McpServer.h"

#include "mcp/methods/JsonFields.h"

#include <QSet>

namespace cmcp {

void McpServer::addListenMethods()
{
    addMethod(QStringLiteral("subscriptions/listen"), &McpServer::listen,
              schema(R"({"type":"object","required":["notifications"],"properties":{"notifications":
            {"type":"object","properties":{"toolsListChanged":{"type":"boolean"},
             "promptsListChanged":{"type":"boolean"},"resourcesListChanged":{"type":"boolean"},
             "resourceSubscriptions":{"type":"array","items":{"type":"string"}},
             "taskIds":{"type":"array","items":{"type":"string"}}}}}})"),
              Era::Modern);
    // What tasks/get would answer, pushed to the listen streams that asked for the task.
    m_tasks->setChangeHandler([this](const Task &task) {
        m_subscriptions.taskChanged(task.id, task.owner, task.describe(true));
    });
}

void McpServer::listen(const Request &request)
{
    Subscriptions::Filter filter = Subscriptions::Filter::fromParams(
            request.params.value(QLatin1String("notifications")).toObject());
    const QString owner = Session::ownerKey(request.session->principal());
    if (!filter.taskIds.isEmpty()) {
        if (!tasks::declared(request.session->clientCapabilities())) {
            request.fail(jsonrpc::MissingRequiredClientCapability,
                         QStringLiteral("notifications.taskIds needs the extension %1, which this "
                                        "request's _meta does not declare")
                                 .arg(QLatin1String(tasks::ExtensionId)),
                         tasks::requiredCapabilityData());
            return;
        }
        // Agreed to only for the principal's own tasks: another's id is left out of the
        // acknowledgement exactly as an unknown one.
        filter.taskIds.removeIf([&](const QString &id) { return !m_tasks->find(id, owner); });
    }
    const QSet<QString> taskIds = filter.taskIds;
    // Answered only when the server ends the stream; the client ends it by closing it.
    m_subscriptions.open(request.session, request.key, request.serial, request.id,
                         std::move(filter));
    // Each task's state as it is now, so that a change between the client's last tasks/get and
    // this stream is not lost.
    for (const QString &id : taskIds) {
        if (const Task *task = m_tasks->find(id, owner))
            m_subscriptions.taskChanged(id, owner, task->describe(true));
    }
}

} // namespace cmcp
