#include "mcp/LogLevel.h"

#include <array>

namespace cmcp {

namespace {
constexpr std::array<const char *, 8> levelNames{"debug", "info",     "notice", "warning",
                                                 "error", "critical", "alert",  "emergency"};
}

QString logLevelName(LogLevel level)
{
    return QString::fromLatin1(levelNames[static_cast<size_t>(level)]);
}

std::optional<LogLevel> parseLogLevel(const QString &name)
{
    for (size_t i = 0; i < levelNames.size(); ++i) {
        if (name == QLatin1String(levelNames[i]))
            return static_cast<LogLevel>(i);
    }
    return std::nullopt;
}

} // namespace cmcp
