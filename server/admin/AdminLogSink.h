#pragma once

#include <QPointer>

#include <spdlog/sinks/base_sink.h>

#include <functional>
#include <memory>
#include <mutex>

namespace cmcp {

// An spdlog sink that hands each log line to a receiver on the receiver's thread. Loggers run
// on any thread, so the line is posted (queued), never delivered in place; detach() stops the
// forwarding before the receiver goes away.
class AdminLogSink final : public spdlog::sinks::base_sink<std::mutex>
{
public:
    using Receiver = std::function<void(int level, const QString &logger, const QString &text)>;

    AdminLogSink(QObject *context, Receiver receiver);
    void detach();

    // Adds a sink to the default logger, which per-category loggers copy when they are made.
    // Call after setupLogging, before other threads log.
    static std::shared_ptr<AdminLogSink> install(QObject *context, Receiver receiver);

protected:
    void sink_it_(const spdlog::details::log_msg &message) override;
    void flush_() override { }

private:
    QObject *m_context; // guarded by base_sink's mutex
    Receiver m_receiver;
};

} // namespace cmcp
