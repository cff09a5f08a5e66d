# Where `cmake --install` and the .deb packages put each file: the FHS layout under the prefix.
#   bin/                          cmcpd, cmcp-console (what a person runs)
#   libexec/container-mcp/        cmcp-jail, libcmcp-zygote.so, cmcp-html, cmcp-browser (what
#                                 cmcpd starts; the zygote library beside the jail, where the
#                                 jail's template monitor opens it)
#   share/container-mcp/          default.env, custom.env.example, apparmor/, the documents
#   lib/systemd/system/           cmcpd.service
# The daemon finds its helpers and default layer relative to its own directory
# (server/base/InstallLayout.h), so any prefix works and a tree can be moved whole.
include(GNUInstallDirs)

set(CMCP_INSTALL_HELPERDIR "${CMAKE_INSTALL_LIBEXECDIR}/container-mcp")
set(CMCP_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/container-mcp")
# systemd reads units from <prefix>/lib/systemd/system for /usr and /usr/local alike.
set(CMCP_INSTALL_UNITDIR "lib/systemd/system")

# The same paths as the daemon sees them, relative to the installed bin directory.
file(RELATIVE_PATH CMCP_HELPERS_FROM_BINDIR "/prefix/${CMAKE_INSTALL_BINDIR}"
     "/prefix/${CMCP_INSTALL_HELPERDIR}")
file(RELATIVE_PATH CMCP_DATA_FROM_BINDIR "/prefix/${CMAKE_INSTALL_BINDIR}"
     "/prefix/${CMCP_INSTALL_DATADIR}")
