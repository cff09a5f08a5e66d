#pragma once

#include "mcp/ToolResult.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace cmcp {

class McpServer;
class ToolCall;

// Runs the disk work of tool calls on worker threads, so that a 10 MB read, an fsync or a walk of
// a tree a job wrote never stalls the event loop, and finishes each call back on the loop's
// thread. Work known to be cheap (a small file read) may run on the loop at once: the hop to a
// worker and back costs more than such a read (measured: 65 µs against 95 to 190 µs per 1 KB
// file_read, docs/benchmarks/history.md).
//
// The workers are shared by every session, but one session holds at most MaxWorkersPerSession
// of them at a time; its further calls wait in its own queue. So a session that starts many slow
// calls (searches with a pattern that backtracks) slows only itself: another session's
// file_write still finds a free worker.
class ToolWorkers : public QObject
{
    Q_OBJECT
public:
    struct Completion
    {
        ToolResult result;
        // Runs on the event loop's thread before the call finishes (resource notifications).
        std::function<void()> onLoop;
    };
    using Work = std::function<Completion()>;
    // Tries the work on the event loop; nullopt when it would not be cheap, and then `work`
    // runs on a worker thread.
    using CheapAttempt = std::function<std::optional<Completion>()>;

    static constexpr int Workers = 4;
    static constexpr int MaxWorkersPerSession = 2;

    explicit ToolWorkers(QObject *parent = nullptr);
    // The one set of workers of `server`, made on first use: every tool family shares it, so the
    // per-session bound holds across families.
    static ToolWorkers &of(McpServer &server);
    ~ToolWorkers() override;

    void run(const std::shared_ptr<ToolCall> &call, Work work, const CheapAttempt &attempt = {});

private:
    struct Queued
    {
        std::shared_ptr<ToolCall> call;
        Work work;
    };
    struct SessionWork
    {
        int running = 0;
        std::deque<Queued> waiting;
    };

    void start(const QString &session, Queued queued);
    void finished(const QString &session);

    QThreadPool m_pool;
    // Touched on the event loop's thread only.
    QHash<QString, SessionWork> m_sessions;
};

} // namespace cmcp
