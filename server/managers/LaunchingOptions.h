#pragma once

#include <QString>
#include <QStringView>

namespace cmcp {

// Whether program has options that make it run another program (find -exec, tar
// --to-command, ...). Its arguments must then be literal for the pre-check to see them.
bool hasLaunchingOptions(QStringView program);

// The option that argument sets when it makes program run another program, e.g. "-exec" for
// find's "-exec"; empty when it sets none.
QString launchingOption(QStringView program, QStringView argument);

} // namespace cmcp
