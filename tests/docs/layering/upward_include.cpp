// Compiled against the mcp layer alone, this must fail: the tools lie above it, and no include
// root of the mcp layer leads to them (cmake/Layers.cmake).
#include "workspace/SessionWorkspaces.h"
