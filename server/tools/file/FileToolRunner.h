#pragma once

#include "ToolResult.h"

#include <QObject>
#include <QThreadPool>

#include <functional>
#include <memory>

namespace cmcp {

class ToolCall;

// Runs the disk work of file tool calls on worker threads, so that a 10 MB read or an fsync
// never stalls the event loop, and finishes each call back on the loop's thread.
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

    explicit FileToolRunner(QObject *parent = nullptr);
    ~FileToolRunner() override;

    void run(const std::shared_ptr<ToolCall> &call, Work work);

private:
    QThreadPool m_pool;
};

} // namespace cmcp
