#include "tools/common/ToolArguments.h"

namespace cmcp::tools {

QString stringArgument(const QJsonObject &arguments, const char *name, const QString &fallback)
{
    const QJsonValue value = arguments.value(QLatin1String(name));
    return value.isString() ? value.toString() : fallback;
}

std::optional<qint64> integerArgument(const QJsonObject &arguments, const char *name)
{
    const QJsonValue value = arguments.value(QLatin1String(name));
    return value.isDouble() ? std::optional<qint64>(qint64(value.toDouble())) : std::nullopt;
}

bool boolArgument(const QJsonObject &arguments, const char *name, bool fallback)
{
    const QJsonValue value = arguments.value(QLatin1String(name));
    return value.isBool() ? value.toBool() : fallback;
}

} // namespace cmcp::tools
