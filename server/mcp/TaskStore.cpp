#include "mcp/TaskStore.h"

#include "posix/OwnDirectory.h"

#include "mcp/ClientInput.h"
#include "mcp/JsonRpc.h"
#include "mcp/Session.h"
#include "base/ReplicaHandle.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSaveFile>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

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

QJsonObject Task::toRecord() const
{
    return {{QLatin1String("taskId"), id},
            {QLatin1String("owner"), owner},
            {QLatin1String("tool"), tool},
            {QLatin1String("status"), taskStatusName(status)},
            {QLatin1String("createdAt"), createdAt.toString(Qt::ISODateWithMs)},
            {QLatin1String("lastUpdatedAt"), lastUpdatedAt.toString(Qt::ISODateWithMs)},
            {QLatin1String("result"), result},
            {QLatin1String("error"), error}};
}

std::optional<Task> Task::fromRecord(const QJsonObject &record)
{
    Task task;
    task.id = record.value(QLatin1String("taskId")).toString();
    task.owner = record.value(QLatin1String("owner")).toString();
    task.tool = record.value(QLatin1String("tool")).toString();
    task.createdAt = QDateTime::fromString(record.value(QLatin1String("createdAt")).toString(),
                                           Qt::ISODateWithMs);
    task.lastUpdatedAt = QDateTime::fromString(
            record.value(QLatin1String("lastUpdatedAt")).toString(), Qt::ISODateWithMs);
    task.result = record.value(QLatin1String("result")).toObject();
    task.error = record.value(QLatin1String("error")).toObject();
    const QString status = record.value(QLatin1String("status")).toString();
    bool known = false;
    for (const TaskStatus candidate :
         {TaskStatus::Working, TaskStatus::Completed, TaskStatus::Failed, TaskStatus::Cancelled}) {
        if (taskStatusName(candidate) == status) {
            task.status = candidate;
            known = true;
        }
    }
    if (!known || !task.id.startsWith(QLatin1String("task-")) || task.owner.isEmpty()
        || !task.createdAt.isValid() || !task.lastUpdatedAt.isValid())
        return std::nullopt;
    return task;
}

bool TaskStore::useDirectory(const QString &directory, QString *error)
{
    // Made private through a descriptor: a link planted at its name would have root chmod, and
    // then empty of old records, whatever it names.
    const QString absolute = QDir::cleanPath(QDir(QDir::currentPath()).absoluteFilePath(directory));
    if (QString why; !openOwnDirectory(absolute, 0700, &why).isValid()) {
        *error = QStringLiteral("TASKS_DIR: %1").arg(why);
        return false;
    }
    m_directory = directory;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    int lost = 0;
    const QDir dir(directory);
    for (const QString &name : dir.entryList({QStringLiteral("task-*.json")}, QDir::Files)) {
        QFile file(dir.filePath(name));
        std::optional<Task> task;
        if (file.open(QIODevice::ReadOnly))
            task = Task::fromRecord(QJsonDocument::fromJson(file.readAll()).object());
        file.close();
        if (!task || name != task->id + QStringLiteral(".json")) {
            spdlog::warn("TASKS_DIR {}: {} is not a task record; it is ignored",
                         directory.toStdString(), name.toStdString());
            continue;
        }
        if (task->isTerminal() && task->lastUpdatedAt.msecsTo(now) > tasks::TtlMs) {
            QFile::remove(file.fileName());
            continue;
        }
        if (!task->isTerminal()) {
            // Its call ran in the daemon that stopped: the task can only be reported lost.
            task->status = TaskStatus::Failed;
            task->error = QJsonObject{
                    {QLatin1String("code"), jsonrpc::InternalError},
                    {QLatin1String("message"),
                     QStringLiteral("the task was lost: the daemon stopped while its call ran "
                                    "(it was started at %1), and a call does not survive a "
                                    "restart")
                             .arg(task->createdAt.toString(Qt::ISODateWithMs))}};
            task->lastUpdatedAt = now;
            persistOrLog(*task);
            ++lost;
        }
        m_tasks.insert(task->id, std::move(*task));
    }
    spdlog::info("tasks: {} kept in {} ({} lost with the previous run)", m_tasks.size(),
                 directory.toStdString(), lost);
    return true;
}

bool TaskStore::persist(const Task &task, QString *error) const
{
    if (m_directory.isEmpty())
        return true;
    // QSaveFile writes beside the target, syncs and renames; the directory is synced after, so
    // that the rename itself survives a crash.
    QSaveFile file(QDir(m_directory).filePath(task.id + QStringLiteral(".json")));
    file.setDirectWriteFallback(false);
    if (!file.open(QIODevice::WriteOnly)
        || file.write(QJsonDocument(task.toRecord()).toJson(QJsonDocument::Compact)) < 0
        || !file.commit()) {
        *error = QStringLiteral("the task record %1 could not be written: %2")
                         .arg(file.fileName(), file.errorString());
        return false;
    }
    const int dir = ::open(QFile::encodeName(m_directory).constData(), O_RDONLY | O_DIRECTORY);
    const bool synced = dir >= 0 && ::fsync(dir) == 0;
    if (dir >= 0)
        ::close(dir);
    if (!synced) {
        *error = QStringLiteral("the directory %1 could not be synced").arg(m_directory);
        return false;
    }
    return true;
}

void TaskStore::persistOrLog(const Task &task) const
{
    if (QString error; !persist(task, &error))
        spdlog::error("task {}: {}", task.id.toStdString(), error.toStdString());
}

// A principal at its cap is refused rather than having its oldest finished tasks dropped: a
// finished task's result was promised to its client for tasks::TtlMs, and a client polling for
// one that had been dropped would get "unknown task", which it cannot tell from a wrong id. A
// refusal says what happened and when it passes; a principal's tasks count against no one
// else's.
QString TaskStore::refusal(const QString &owner, const QString &principalName)
{
    dropExpired();
    int stored = 0;
    for (const Task &task : std::as_const(m_tasks))
        stored += task.owner == owner ? 1 : 0;
    if (stored < m_maxPerOwner)
        return {};
    return QStringLiteral("principal '%1' already has %2 tasks stored, the most allowed "
                          "(TASKS_MAX_PER_PRINCIPAL); a finished task is kept for %3 s after "
                          "it ended: try again when one has expired, or call without a task")
            .arg(principalName)
            .arg(stored)
            .arg(tasks::TtlMs / 1000);
}

Task *TaskStore::create(const QString &owner, const QString &tool, QString *error)
{
    dropExpired();
    Task task;
    task.id = replicaHandle("task-");
    task.owner = owner;
    task.tool = tool;
    task.createdAt = task.lastUpdatedAt = QDateTime::currentDateTimeUtc();
    if (!persist(task, error))
        return nullptr;
    return &*m_tasks.insert(task.id, std::move(task));
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
    persistOrLog(*it);
    changed(*it);
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
    changed(*it);
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
    if (!answered.isEmpty()) {
        task.lastUpdatedAt = QDateTime::currentDateTimeUtc();
        changed(task);
    }
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
    persistOrLog(task);
    changed(task);
    // Taken first: closing the session settles the task, which must then find it terminal.
    const std::shared_ptr<Session> call = std::move(task.call);
    if (call)
        call->close(reason);
}

void TaskStore::dropExpired()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (auto it = m_tasks.begin(); it != m_tasks.end();) {
        if (it->isTerminal() && it->lastUpdatedAt.msecsTo(now) > tasks::TtlMs) {
            if (!m_directory.isEmpty())
                QFile::remove(QDir(m_directory).filePath(it->id + QStringLiteral(".json")));
            it = m_tasks.erase(it);
        } else {
            ++it;
        }
    }
}

void TaskExchange::complete(const QJsonValue &responses)
{
    if (const std::shared_ptr<TaskStore> store = m_store.lock())
        store->settle(m_taskId, responses);
}

} // namespace cmcp
