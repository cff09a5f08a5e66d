# Run by `cmake --install` (Packaging.cmake): installs config/cmcpd.service with its paths under
# the prefix being installed to. The unit in the source tree is written for /usr/local.
#   CMCP_UNIT_SOURCE, CMCP_UNIT_STAGED, CMCP_INSTALL_UNITDIR: set by the caller.
file(READ "${CMCP_UNIT_SOURCE}" unit)
string(REPLACE "/usr/local/" "${CMAKE_INSTALL_PREFIX}/" unit "${unit}")
file(WRITE "${CMCP_UNIT_STAGED}" "${unit}")
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${CMCP_INSTALL_UNITDIR}" TYPE FILE
     FILES "${CMCP_UNIT_STAGED}")
