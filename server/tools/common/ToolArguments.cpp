#include "tools/common/ToolArguments.h"

#include <cmath>

namespace cmcp::tools {

QString stringArgument(const QJsonObject &arguments, const char *name, const QString &fallback)
{
    const QJsonValue value = arguments.value(QLatin1String(name));
    return value.isString() ? value.toString() : fallback;
}

std::optional<qint64> integerArgument(const QJsonObject &arguments, const char *name)
{
    const QJsonValue value = arguments.value(QLatin1String(name));
    if (!value.isDouble())
        return std::nullopt;
    // Checked before the conversion, which is undefined for a double outside qint64 (1e308 gave
    // INT64_MIN, a negative quota that read as none). The schema validator refuses these first.
    constexpr qint64 largestExactInteger = qint64(1) << 53;
    const double number = value.toDouble();
    if (!std::isfinite(number) || std::trunc(number) != number
        || std::fabs(number) > double(largestExactInteger))
        return std::nullopt;
    // Exact for a number that was parsed as a 64-bit integer, which its double only approximates.
    const qint64 integer = value.toInteger();
    if (integer < -largestExactInteger || integer > largestExactInteger)
        return std::nullopt;
    return integer;
}

bool boolArgument(const QJsonObject &arguments, const char *name, bool fallback)
{
    const QJsonValue value = arguments.value(QLatin1String(name));
    return value.isBool() ? value.toBool() : fallback;
}

} // namespace cmcp::tools
