// Compiled against the mcp layer alone, this must build: the control for upward_include.cpp.
#include "mcp/McpServer.h"
