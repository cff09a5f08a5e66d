#pragma once

#include <QJsonObject>
#include <QString>

namespace cmcp {

// The detail pane's text for one call: who, when, how it ended, the full (redacted) arguments,
// the output head and tail, and the accounting.
QString callDetailText(const QJsonObject &call);

} // namespace cmcp
