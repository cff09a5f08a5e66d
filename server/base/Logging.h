#pragma once

#include <QString>

namespace cmcp {

// Sends all logging to stderr through spdlog, so that stdout stays free for
// the stdio transport. `json` selects one JSON object per line
// ({"time","level","logger","msg"}) instead of the human format. Installs a
// Qt message handler: qDebug/qInfo/qWarning/qCritical/qFatal go to spdlog's
// debug/info/warn/err/critical, under a logger named after the Qt category
// ("cmcp" for the default category). `level` is a LOG_LEVEL value (trace,
// debug, info, warning or warn, error, critical, off; case-insensitive).
// May be called again to change the set-up, but not while other threads log
// through spdlog's free functions (spdlog::info and the like).
void setupLogging(const QString &level, bool json);

// Changes the level of every logger; false (and no change) for an unknown level.
bool setLogLevel(const QString &level);

} // namespace cmcp
