#include "mcp/TaskStore.h"

#include "mcp/Session.h"
#include "common/ReplicaHandle.h"

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
    QJsonObject object{
            {QLatin1String("taskId"), id},
            {QLatin1String("status"), taskStatusName(status)},
            {QLatin1String("createdAt"), createdAt.toString(Qt::ISODateWithMs)},
            {QLatin1String("lastUpdatedAt"), lastUpdatedAt.toString(Qt::ISODateWithMs)},
            {QLatin1String("ttlMs"), double(tasks::TtlMs)},
            {QLatin1String("pollIntervalMs"), double(tasks::PollIntervalMs)},
    };
    if (detailed && status == TaskStatus::Completed)
        object.insert(QLatin1String("result"), result);
    if (detailed && status == TaskStatus::Failed)
        object.insert(QLatin1String("error"), error);
    return object;
}

Task &TaskStore::create(const QString &owner, const QString &tool)
{
    dropExpired();
    Task task;
    task.id = replicaHandle("task-");
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
    it->call.reset();
}

void TaskStore::cancel(Task &task, const QString &reason)
{
    if (task.isTerminal())
        return;
    task.status = TaskStatus::Cancelled;
    task.lastUpdatedAt = QDateTime::currentDateTimeUtc();
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
