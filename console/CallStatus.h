#pragma once

#include <QColor>
#include <QString>

namespace cmcp {

// How a call's status ("running" or an outcome name) is shown: a word and a colour that reads
// on light and dark themes.
QString statusLabel(const QString &status);
QColor statusColour(const QString &status);

} // namespace cmcp
