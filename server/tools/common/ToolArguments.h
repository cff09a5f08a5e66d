// Reading a call's arguments. They arrive validated against the tool's input schema, so what
// is left is an argument the caller left out: each reader returns the fallback then.
#pragma once

#include <QJsonObject>
#include <QString>

#include <optional>

namespace cmcp::tools {

QString stringArgument(const QJsonObject &arguments, const char *name,
                       const QString &fallback = {});
// Only an integer from -2^53 to 2^53 (what a JSON number holds exactly) counts: anything else is
// taken as left out, never converted.
std::optional<qint64> integerArgument(const QJsonObject &arguments, const char *name);
bool boolArgument(const QJsonObject &arguments, const char *name, bool fallback = false);

} // namespace cmcp::tools
