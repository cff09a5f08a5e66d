#pragma once

#include <functional>

namespace cmcp {

class McpServer;

// What a program built on the daemon adds to its MCP server once the tool families and the
// audit log are in place, before any transport opens. The shipped cmcpd adds nothing; the
// conformance suites' test build adds its test tools, resources and prompts here, so that no
// test code is linked into the daemon that is installed.
using ServerAdditions = std::function<void(McpServer &server)>;

// The whole life of the daemon behind main(): the command line, the layered settings, the
// sandbox probe, then the server until it is asked to stop. Returns the exit status.
int runDaemon(int argc, char *argv[], const ServerAdditions &addToServer = {});

} // namespace cmcp
