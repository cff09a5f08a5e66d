#include "tools/file/FileToolRunner.h"

#include "mcp/ToolCall.h"

namespace cmcp {

FileToolRunner::FileToolRunner(QObject *parent) : QObject(parent)
{
    // Disk work gains little from many threads; a few keep one slow call from holding up others.
    m_pool.setMaxThreadCount(4);
}

FileToolRunner::~FileToolRunner()
{
    m_pool.waitForDone();
}

namespace {

void finishCall(ToolCall &call, const FileToolRunner::Completion &completion)
{
    if (completion.onLoop && !completion.result.isError)
        completion.onLoop();
    call.finish(completion.result);
}

} // namespace

void FileToolRunner::run(const std::shared_ptr<ToolCall> &call, Work work,
                         const CheapAttempt &attempt)
{
    if (attempt) {
        if (const std::optional<Completion> done = attempt()) {
            finishCall(*call, *done);
            return;
        }
    }
    // The destructor waits for every task, so `this` outlives the work; a completion queued
    // after the destructor has run is dropped with the object.
    m_pool.start([this, call, work = std::move(work)] {
        Completion completion = work();
        QMetaObject::invokeMethod(
                this, [call, completion = std::move(completion)] { finishCall(*call, completion); },
                Qt::QueuedConnection);
    });
}

} // namespace cmcp
