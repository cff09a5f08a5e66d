#include "tools/common/ToolWorkers.h"

#include "mcp/McpServer.h"
#include "mcp/ToolCall.h"

namespace cmcp {

ToolWorkers::ToolWorkers(QObject *parent) : QObject(parent)
{
    // Disk work gains little from many threads; a few keep one slow call from holding up others.
    m_pool.setMaxThreadCount(Workers);
}

ToolWorkers &ToolWorkers::of(McpServer &server)
{
    static const QString name = QStringLiteral("cmcp::ToolWorkers");
    if (auto *existing = server.findChild<ToolWorkers *>(name, Qt::FindDirectChildrenOnly))
        return *existing;
    auto *workers = new ToolWorkers(&server);
    workers->setObjectName(name);
    return *workers;
}

ToolWorkers::~ToolWorkers()
{
    m_pool.waitForDone();
}

namespace {

void finishCall(ToolCall &call, const ToolWorkers::Completion &completion)
{
    if (completion.onLoop && !completion.result.isError)
        completion.onLoop();
    call.finish(completion.result);
}

} // namespace

void ToolWorkers::run(const std::shared_ptr<ToolCall> &call, Work work, const CheapAttempt &attempt)
{
    if (attempt) {
        if (const std::optional<Completion> done = attempt()) {
            finishCall(*call, *done);
            return;
        }
    }
    const QString session = call->sessionId();
    SessionWork &own = m_sessions[session];
    if (own.running >= MaxWorkersPerSession) {
        own.waiting.push_back({call, std::move(work)});
        return;
    }
    start(session, {call, std::move(work)});
}

void ToolWorkers::start(const QString &session, Queued queued)
{
    ++m_sessions[session].running;
    // The destructor waits for every task, so `this` outlives the work; a completion queued
    // after the destructor has run is dropped with the object.
    m_pool.start([this, session, call = std::move(queued.call), work = std::move(queued.work)] {
        Completion completion = work();
        QMetaObject::invokeMethod(
                this,
                [this, session, call, completion = std::move(completion)] {
                    finishCall(*call, completion);
                    finished(session);
                },
                Qt::QueuedConnection);
    });
}

void ToolWorkers::finished(const QString &session)
{
    const auto own = m_sessions.find(session);
    if (own == m_sessions.end())
        return;
    --own->running;
    // A call cancelled while it waited (its session ended) is not started at all.
    while (!own->waiting.empty() && own->waiting.front().call->isFinished())
        own->waiting.pop_front();
    if (own->waiting.empty()) {
        if (own->running == 0)
            m_sessions.erase(own);
        return;
    }
    Queued next = std::move(own->waiting.front());
    own->waiting.pop_front();
    start(session, std::move(next));
}

} // namespace cmcp
