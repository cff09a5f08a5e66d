#pragma once

#include <QString>

namespace cmcp {

class Settings;

// Which event dispatcher runs the daemon's main thread (MCP_EVENT_DISPATCHER). Qt takes it
// only before the QCoreApplication exists, that is before the settings are loaded (they need
// the application's arguments), so the choice is read from the process environment alone.

// Installs the epoll dispatcher unless MCP_EVENT_DISPATCHER is "qt", and returns the name of
// the one the thread gets. Before the QCoreApplication is constructed.
QString installEventDispatcher();

// Logs a warning when the loaded settings ask for another dispatcher than `installed` (from
// a configuration file or the command line, which come too late to choose it).
void warnIfEventDispatcherDiffers(const Settings &settings, const QString &installed);

} // namespace cmcp
