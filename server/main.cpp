// cmcpd: the Container-MCP daemon. Loads the layered settings, then serves MCP over HTTP
// (Streamable HTTP at /mcp, legacy SSE at /sse) or over stdio. Its start-up is in
// server/daemon (DaemonMain), which the conformance suites' test build shares.

#include "daemon/DaemonMain.h"

int main(int argc, char *argv[])
{
    return cmcp::runDaemon(argc, argv);
}
