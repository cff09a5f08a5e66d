// Where a program of this project that another one starts (cmcp-jail, cmcp-html, cmcp-browser)
// lives: installed beside the program that starts it, or, in a build tree, in its own folder
// there (build/server/jail/cmcp-jail beside build/server/cmcpd).
#pragma once

#include <QString>

namespace cmcp {

// `name` beside the running program if it is an executable there, else `buildFolder/name`.
QString helperProgram(const QString &name, const QString &buildFolder);

} // namespace cmcp
