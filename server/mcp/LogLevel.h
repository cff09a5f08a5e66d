#pragma once

#include <QString>
#include <optional>

// The syslog severities MCP uses for logging/setLevel and notifications/message.
namespace cmcp {

enum class LogLevel { Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency };

QString logLevelName(LogLevel level);
std::optional<LogLevel> parseLogLevel(const QString &name);

} // namespace cmcp
