// Where the daemon finds what ships with it: the programs it starts (cmcp-jail with the
// templates' zygote library beside it, cmcp-html, cmcp-browser) and its default settings layer.
//
// Installed (`cmake --install`, the .deb packages) they sit in the FHS layout, found relative to
// the running cmcpd so that any prefix works:
//   <prefix>/bin/cmcpd
//   <prefix>/libexec/container-mcp/{cmcp-jail,libcmcp-zygote.so,cmcp-html,cmcp-browser}
//   <prefix>/share/container-mcp/default.env
// In a build tree each helper is built into a folder beside cmcpd named for it
// (build/server/jail/cmcp-jail beside build/server/cmcpd), and the default layer is read from
// the source tree.
#pragma once

#include <QString>

namespace cmcp {

// The helper program `name`: in the installed helpers' folder when it is an executable there,
// else `buildFolder/name` beside the running program.
QString helperProgram(const QString &name, const QString &buildFolder);

// The installed data file `name` (<prefix>/share/container-mcp/name) when it exists, else "".
QString installedDataFile(const QString &name);

} // namespace cmcp
