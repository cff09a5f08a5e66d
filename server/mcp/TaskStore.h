#pragma once

#include "mcp/Exchange.h"
#include "mcp/Session.h"

#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

// The Tasks extension (io.modelcontextprotocol/tasks): a tools/call the server answers at once
// with a task id, while the call runs on detached from its request; the client polls
// tasks/get for the outcome and may end it with tasks/cancel.
namespace cmcp {

class Session;

namespace tasks {
inline constexpr char ExtensionId[] = "io.modelcontextprotocol/tasks";
// How long a finished task stays readable, and how often a client should ask about one.
inline constexpr qint64 TtlMs = 3600 * 1000;
inline constexpr qint64 PollIntervalMs = 500;

// True when `clientCapabilities` declare the extension.
bool declared(const QJsonObject &clientCapabilities);
// `clientCapabilities` without the extension: what the call a task runs sees, so that it runs
// as a plain call instead of becoming a task again.
QJsonObject withoutExtension(QJsonObject clientCapabilities);
// The -32021 error data naming the extension as the capability a request lacks.
QJsonObject requiredCapabilityData();
} // namespace tasks

enum class TaskStatus { Working, Completed, Failed, Cancelled };

struct Task
{
    QString id;
    // Session::ownerKey of the principal that created it: only that principal sees it.
    QString owner;
    QString tool;
    TaskStatus status = TaskStatus::Working;
    QDateTime createdAt;
    QDateTime lastUpdatedAt;
    QJsonObject result; // Completed: the tool's result
    QJsonObject error; // Failed: the JSON-RPC error the call ended with
    // What the call has asked its client and waits for, by input key ({method, params}), and
    // where each answer goes. A working task that waits for any is input_required.
    QJsonObject inputRequests;
    QHash<QString, ClientReply> inputReplies;
    // The detached stateless session the call runs in; closing it cancels the call (and kills
    // a jailed job it started). Released once the task is terminal.
    std::shared_ptr<Session> call;

    bool isTerminal() const { return status != TaskStatus::Working; }
    // What the task's file holds (everything but the call and its questions), and back.
    QJsonObject toRecord() const;
    static std::optional<Task> fromRecord(const QJsonObject &record);
    // The task's wire fields (taskId, status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs),
    // and with `detailed` the inlined result or error of a terminal task, or the inputRequests
    // of one waiting for input.
    QJsonObject describe(bool detailed) const;
};

QString taskStatusName(TaskStatus status);

// Every task still within its time to live, by id. With a directory, each task is also a file
// there, written (and synced) when it is created and when it ends, so that a restarted daemon
// still answers for the tasks that finished, and says of those that were running that they
// were lost with the daemon.
class TaskStore
{
public:
    // Keeps the tasks in `directory` (made if missing, mode 0700) and loads those a previous
    // run left there. False, with `error` saying why, when it cannot be used.
    bool useDirectory(const QString &directory, QString *error);
    // TASKS_MAX_PER_PRINCIPAL: the most tasks one principal may have stored at once, working
    // or finished within their time to live.
    void setMaxPerOwner(int count) { m_maxPerOwner = count; }
    // Why `owner` (the principal `principalName`) may not create another task now, naming the
    // setting; empty when it may. Expired ones are dropped first.
    QString refusal(const QString &owner, const QString &principalName);
    // A new working task, on disk before it is returned when the store has a directory;
    // nullptr, with `error`, when it could not be written. Expired ones are dropped first.
    Task *create(const QString &owner, const QString &tool, QString *error);
    // The task, or null when there is none of that id owned by `owner` (another principal's
    // task answers exactly as an unknown one).
    Task *find(const QString &id, const QString &owner);
    // The call's response arrived: `response` is the JSON-RPC response object, or undefined
    // when the call was cancelled. A task already terminal (cancelled first) keeps its state.
    void settle(const QString &id, const QJsonValue &response);
    // The task's call asks its client: the task is input_required until tasks/update answers.
    void park(const QString &id, const QString &key, const QJsonObject &request, ClientReply reply);
    // Hands the answers among `inputResponses` to the questions the task waits for (other keys
    // are ignored, as the extension has it). Returns why an answer is not valid for its
    // question, with nothing handed on, or empty.
    QString answer(Task &task, const QJsonObject &inputResponses);
    // Marks the task cancelled and closes its call. Nothing for a terminal task.
    void cancel(Task &task, const QString &reason);
    int size() const { return int(m_tasks.size()); }
    // Called after every change of a task's status as tasks/get shows it: working,
    // input_required (a question parked or all answered), a terminal status.
    void setChangeHandler(std::function<void(const Task &)> handler)
    {
        m_changed = std::move(handler);
    }

private:
    void dropExpired();
    void changed(const Task &task) const
    {
        if (m_changed)
            m_changed(task);
    }
    // Writes the task's file (atomically, synced); false with `error` when it fails.
    bool persist(const Task &task, QString *error) const;
    // Persists, logging a failure: the task lives on in memory.
    void persistOrLog(const Task &task) const;
    QHash<QString, Task> m_tasks;
    QString m_directory;
    int m_maxPerOwner = 100;
    std::function<void(const Task &)> m_changed;
};

// Where the response of a task's call goes: into the task instead of to a client. What the
// call sends on the way (progress, log messages) has no stream to go to and is dropped.
class TaskExchange : public Exchange
{
public:
    TaskExchange(std::weak_ptr<TaskStore> store, QString taskId)
        : m_store(std::move(store)),
          m_taskId(std::move(taskId))
    {
    }
    void sendRelated(const QJsonObject &) override { }
    void complete(const QJsonValue &responses) override;

private:
    std::weak_ptr<TaskStore> m_store;
    const QString m_taskId;
};

} // namespace cmcp
