#include "mcp/TaskStore.h"

#include "mcp/ClientInput.h"
#include "mcp/Session.h"
#include "common/UnguessableId.h"

namespace cmcp {

namespace tasks {

bool declared(const QJsonObject &clientCapabilities)
{
    return clientCapabilities.value(QLatin1String("extensions"))
            .toObject()
            .contains(QLatin1String(ExtensionId));
}

QJsonObject withoutExtension(QJsonObject clientCapabilities)
{
    QJsonObject extensions = clientCapabilities.value(QLatin1String("extensions")).toObject();
    extensions.remove(QLatin1String(ExtensionId));
    clientCapabilities.insert(QLatin1String("extensions"), extensions);
    return clientCapabilities;
}

QJsonObject requiredCapabilityData()
{
    return QJsonObject{{QLatin1String("requiredCapabilities"),
                        QJsonObject{{QLatin1String("extensions"),
                                     QJsonObject{{QLatin1String(ExtensionId), QJsonObject{}}}}}}};
}

} // namespace tasks

QString taskStatusName(TaskStatus status)
{
    switch (status) {
    case TaskStatus::Working:
        return QStringLiteral("working");
    case TaskStatus::Completed:
        return QStringLiteral("completed");
    case TaskStatus::Failed:
        return QStringLiteral("failed");
    case TaskStatus::Cancelled:
        return QStringLiteral("cancelled");
    }
    return QStringLiteral("failed");
}

QJsonObject Task::describe(bool detailed) const
{
    const bool waitsForInput = status == TaskStatus::Working && !inputRequests.isEmpty();
    QJsonObject object{
            {QLatin1String("taskId"), id},
            {QLatin1String("status"),
             waitsForInput ? QStringLiteral("input_required") : taskStatusName(status)},
            {QLatin1String("createdAt"), createdAt.toString(Qt::ISODateWithMs)},
            {QLatin1String("lastUpdatedAt"), lastUpdatedAt.toString(Qt::ISODateWithMs)},
            {QLatin1String("ttlMs"), double(tasks::TtlMs)},
            {QLatin1String("pollIntervalMs"), double(tasks::PollIntervalMs)},
    };
    if (detailed && status == TaskStatus::Completed)
        object.insert(QLatin1String("result"), result);
    if (detailed && status == TaskStatus::Failed)
        object.insert(QLatin1String("error"), error);
    if (detailed && waitsForInput)
        object.insert(QLatin1String("inputRequests"), inputRequests);
    return object;
}

Task &TaskStore::create(const QString &owner, const QString &tool)
{
    dropExpired();
    Task task;
    task.id = unguessableId("task-");
    task.owner = owner;
    task.tool = tool;
    task.createdAt = task.lastUpdatedAt = QDateTime::currentDateTimeUtc();
    return *m_tasks.insert(task.id, std::move(task));
}

Task *TaskStore::find(const QString &id, const QString &owner)
{
    const auto it = m_tasks.find(id);
    if (it == m_tasks.end() || it->owner != owner)
        return nullptr;
    return &*it;
}

void TaskStore::settle(const QString &id, const QJsonValue &response)
{
    const auto it = m_tasks.find(id);
    if (it == m_tasks.end() || it->isTerminal())
        return;
    const QJsonObject message = response.toObject();
    if (response.isUndefined()) {
        it->status = TaskStatus::Cancelled;
    } else if (message.contains(QLatin1String("error"))) {
        it->status = TaskStatus::Failed;
        it->error = message.value(QLatin1String("error")).toObject();
    } else {
        it->status = TaskStatus::Completed;
        it->result = message.value(QLatin1String("result")).toObject();
    }
    it->lastUpdatedAt = QDateTime::currentDateTimeUtc();
    it->inputRequests = {};
    it->inputReplies.clear();
    it->call.reset();
}

void TaskStore::park(const QString &id, const QString &key, const QJsonObject &request,
                     ClientReply reply)
{
    const auto it = m_tasks.find(id);
    if (it == m_tasks.end() || it->isTerminal()) {
        reply({}, QStringLiteral("the task has ended"));
        return;
    }
    it->inputRequests.insert(key, request);
    it->inputReplies.insert(key, std::move(reply));
    it->lastUpdatedAt = QDateTime::currentDateTimeUtc();
}

QString TaskStore::answer(Task &task, const QJsonObject &inputResponses)
{
    QList<std::pair<ClientReply, QJsonObject>> answered;
    for (auto it = inputResponses.begin(); it != inputResponses.end(); ++it) {
        if (!task.inputRequests.contains(it.key()))
            continue;
        const QString method = task.inputRequests.value(it.key())
                                       .toObject()
                                       .value(QLatin1String("method"))
                                       .toString();
        if (const QString problem = clientinput::answerProblem(method, it.value());
            !problem.isEmpty())
            return QStringLiteral("params.inputResponses.%1: %2").arg(it.key(), problem);
    }
    for (auto it = inputResponses.begin(); it != inputResponses.end(); ++it) {
        if (!task.inputRequests.contains(it.key()))
            continue;
        task.inputRequests.remove(it.key());
        answered.append({task.inputReplies.take(it.key()), it.value().toObject()});
    }
    if (!answered.isEmpty())
        task.lastUpdatedAt = QDateTime::currentDateTimeUtc();
    // Last: an answer may finish the call, which settles the task.
    for (const auto &[reply, result] : answered)
        reply(result, {});
    return {};
}

void TaskStore::cancel(Task &task, const QString &reason)
{
    if (task.isTerminal())
        return;
    task.status = TaskStatus::Cancelled;
    task.lastUpdatedAt = QDateTime::currentDateTimeUtc();
    task.inputRequests = {};
    task.inputReplies.clear();
    // Taken first: closing the session settles the task, which must then find it terminal.
    const std::shared_ptr<Session> call = std::move(task.call);
    if (call)
        call->close(reason);
}

void TaskStore::dropExpired()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (auto it = m_tasks.begin(); it != m_tasks.end();) {
        if (it->isTerminal() && it->lastUpdatedAt.msecsTo(now) > tasks::TtlMs)
            it = m_tasks.erase(it);
        else
            ++it;
    }
}

void TaskExchange::complete(const QJsonValue &responses)
{
    if (const std::shared_ptr<TaskStore> store = m_store.lock())
        store->settle(m_taskId, responses);
}

} // namespace cmcp
