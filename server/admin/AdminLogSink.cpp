#include "admin/AdminLogSink.h"

#include <QMetaObject>
#include <QString>

#include <spdlog/spdlog.h>

namespace cmcp {

AdminLogSink::AdminLogSink(QObject *context, Receiver receiver)
    : m_context(context),
      m_receiver(std::move(receiver))
{
}

void AdminLogSink::detach()
{
    std::lock_guard lock(mutex_);
    m_context = nullptr;
}

std::shared_ptr<AdminLogSink> AdminLogSink::install(QObject *context, Receiver receiver)
{
    auto sink = std::make_shared<AdminLogSink>(context, std::move(receiver));
    if (auto logger = spdlog::default_logger())
        logger->sinks().push_back(sink);
    return sink;
}

void AdminLogSink::sink_it_(const spdlog::details::log_msg &message)
{
    if (!m_context)
        return;
    const int level = int(message.level);
    const QString logger =
            QString::fromUtf8(message.logger_name.data(), qsizetype(message.logger_name.size()));
    const QString text =
            QString::fromUtf8(message.payload.data(), qsizetype(message.payload.size()));
    // Posting an event is thread-safe; an event for an object deleted meanwhile is discarded.
    QMetaObject::invokeMethod(
            m_context,
            [receiver = m_receiver, level, logger, text] { receiver(level, logger, text); },
            Qt::QueuedConnection);
}

} // namespace cmcp
