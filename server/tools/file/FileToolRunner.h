#pragma once

#include "mcp/ToolResult.h"

#include <QObject>
#include <QThreadPool>

#include <functional>
#include <memory>
#include <optional>

namespace cmcp {

class ToolCall;

// Runs the disk work of file tool calls on worker threads, so that a 10 MB read or an fsync
// never stalls the event loop, and finishes each call back on the loop's thread. Work known to
// be cheap (a small file read) may run on the loop at once: the hop to a worker and back costs
// more than such a read (measured: 65 µs against 95 to 190 µs per 1 KB file_read, BENCHMARKS.md).
class FileToolRunner : public QObject
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

    explicit FileToolRunner(QObject *parent = nullptr);
    ~FileToolRunner() override;

    void run(const std::shared_ptr<ToolCall> &call, Work work, const CheapAttempt &attempt = {});

private:
    QThreadPool m_pool;
};

} // namespace cmcp
