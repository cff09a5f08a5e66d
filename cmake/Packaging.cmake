# What `cmake --install` puts beside the programs (their own install() rules sit with their
# targets), and the .deb packages CPack makes from the same rules (`./bin/cmcp package`).
#
# Components, and the packages that hold them:
#   daemon   container-mcp          cmcpd, cmcp-jail with the zygote library, cmcp-html, the
#                                   default layer: what the container image installs too
#   host        "                   what only a host needs: the systemd unit, the AppArmor
#                                   profiles, the documents
#   browser  container-mcp-browser  cmcp-browser, which alone pulls in QtWebEngine
#   console  container-mcp-console  cmcp-console, the administrator's desktop program

install(FILES ${PROJECT_SOURCE_DIR}/config/default.env ${PROJECT_SOURCE_DIR}/config/custom.env.example
        DESTINATION ${CMCP_INSTALL_DATADIR} COMPONENT daemon)
# The pages an operator of an installed daemon reads: what it is, its settings, its install and
# its security model.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/configuration.md
              ${PROJECT_SOURCE_DIR}/docs/install.md ${PROJECT_SOURCE_DIR}/docs/security-model.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/container-mcp COMPONENT host)

# The AppArmor profiles with the script that loads them, which the package's postinst runs
# where the kernel has AppArmor (an operator of a plain install runs it once by hand).
install(FILES ${PROJECT_SOURCE_DIR}/apparmor/cmcpd ${PROJECT_SOURCE_DIR}/apparmor/cmcp-jail
              ${PROJECT_SOURCE_DIR}/apparmor/cmcp-browser ${PROJECT_SOURCE_DIR}/apparmor/cmcp-job-bash
              ${PROJECT_SOURCE_DIR}/apparmor/cmcp-job-python ${PROJECT_SOURCE_DIR}/apparmor/cmcp-container
        DESTINATION ${CMCP_INSTALL_DATADIR}/apparmor COMPONENT host)
install(FILES ${PROJECT_SOURCE_DIR}/apparmor/tunables/cmcp
        DESTINATION ${CMCP_INSTALL_DATADIR}/apparmor/tunables COMPONENT host)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/apparmor/install.sh
        DESTINATION ${CMCP_INSTALL_DATADIR}/apparmor COMPONENT host)

# The systemd unit names the installed cmcpd by its absolute path, which is known only when
# installing: `cmake --install --prefix P` and CPack (prefix /usr, into a staging DESTDIR) each
# get a unit that starts their own cmcpd.
install(CODE "
    set(CMCP_UNIT_SOURCE \"${PROJECT_SOURCE_DIR}/config/cmcpd.service\")
    set(CMCP_UNIT_STAGED \"${CMAKE_BINARY_DIR}/packaging/cmcpd.service\")
    set(CMCP_INSTALL_UNITDIR \"${CMCP_INSTALL_UNITDIR}\")
    include(\"${PROJECT_SOURCE_DIR}/cmake/InstallUnit.cmake\")"
    COMPONENT host)

# CPack installs into its staging tree without building `all` first (the tests, which no package
# holds): ./bin/cmcp package builds the packaged programs itself.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_PACKAGE_NAME container-mcp)
set(CPACK_PACKAGE_VENDOR "Container-MCP")
set(CPACK_PACKAGE_CONTACT "Container-MCP maintainers <container-mcp@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "secure MCP server: shell, Python, files and web tools in sandboxes")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL daemon host browser console)
set(CPACK_COMPONENT_DAEMON_GROUP server)
set(CPACK_COMPONENT_HOST_GROUP server)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Runtime dependencies derived from the programs (dpkg-shlibdeps), plus what they start or load
# that no ELF header names.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME container-mcp)
set(CPACK_DEBIAN_SERVER_DESCRIPTION
    "secure MCP server: shell, Python, files and web tools in sandboxes
 cmcpd serves the Model Context Protocol over HTTP and stdio. Every job runs in cmcp-jail
 (user, mount, pid and network namespaces, cgroups, Landlock, seccomp, AppArmor); web traffic
 passes one egress gate; every call is written to a hash-chained audit log.")
# bash and python3 run the jobs; the web tools need the CA certificates. btrfs-progs backs
# SANDBOX_WORKSPACE_QUOTA_MB, AppArmor the profiles' layer: both optional.
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "bash, python3, ca-certificates")
set(CPACK_DEBIAN_SERVER_PACKAGE_RECOMMENDS "apparmor, container-mcp-browser")
set(CPACK_DEBIAN_SERVER_PACKAGE_SUGGESTS "btrfs-progs, container-mcp-console")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/packaging/deb/postinst;${PROJECT_SOURCE_DIR}/packaging/deb/prerm;${PROJECT_SOURCE_DIR}/packaging/deb/postrm")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_BROWSER_PACKAGE_NAME container-mcp-browser)
set(CPACK_DEBIAN_BROWSER_DESCRIPTION
    "web browsing worker of Container-MCP
 cmcp-browser hosts QtWebEngine for the web_browse and web_scrape tools, its traffic confined
 to the daemon's egress gate.")
# QtWebEngine runs its renderers in QtWebEngineProcess, which no ELF header names; pages need a font.
set(CPACK_DEBIAN_BROWSER_PACKAGE_DEPENDS
    "container-mcp (= ${PROJECT_VERSION}), libqt6webenginecore6-bin, fonts-dejavu-core")

set(CPACK_DEBIAN_CONSOLE_PACKAGE_NAME container-mcp-console)
set(CPACK_DEBIAN_CONSOLE_DESCRIPTION
    "desktop console of Container-MCP
 cmcp-console watches and administers a running cmcpd over its admin socket: calls, sessions,
 workspaces and live settings.")
# Qt Widgets on X11 or Wayland: the platform plugins are loaded, not linked.
set(CPACK_DEBIAN_CONSOLE_PACKAGE_DEPENDS "qt6-qpa-plugins")

include(CPack)
