#include "daemon/EventLoopChoice.h"

#include "common/Settings.h"
#include "eventloop/EpollEventDispatcher.h"

#include <QCoreApplication>

#include <spdlog/spdlog.h>

namespace cmcp {

QString installEventDispatcher()
{
    if (qEnvironmentVariable("MCP_EVENT_DISPATCHER") == QLatin1String("qt"))
        return QStringLiteral("qt");
    // The application takes ownership and deletes it after the last event loop.
    QCoreApplication::setEventDispatcher(new EpollEventDispatcher);
    return QStringLiteral("epoll");
}

void warnIfEventDispatcherDiffers(const Settings &settings, const QString &installed)
{
    const QString wanted = settings.text(u"MCP_EVENT_DISPATCHER");
    if (wanted != installed)
        spdlog::warn("MCP_EVENT_DISPATCHER={} comes too late from a configuration file or the "
                     "command line; the {} event dispatcher runs (set it in the environment)",
                     wanted.toStdString(), installed.toStdString());
}

} // namespace cmcp
