#pragma once

#include <functional>

class QCoreApplication;

namespace cmcp {

class McpServer;

// What the daemon changes about its POSIX process: how glibc's heap is kept, how termination
// signals arrive and how many descriptors it may hold.

// Before anything allocates: large buffers stay on the heap for the next call.
void keepLargeBuffersOnHeap();

// SIGINT and SIGTERM quit `app`'s event loop, or, once a handler is set, call it (on the event
// loop, never in signal context). Before any thread starts, so that every thread inherits the
// blocked signals.
// SIGHUP is read the same way and calls the reload handler (MCP_POLICY_FILE); without one it
// is logged and ignored, never the end of the daemon.
void watchTerminationSignals(QCoreApplication &app);
void setTerminationHandler(std::function<void(int signal)> handler);
void setReloadHandler(std::function<void()> handler);

// Raises the soft limit on open descriptors to the hard limit.
void raiseDescriptorLimit();

// Gives the heap of closed sessions back to the kernel a little after a burst of closes.
void trimHeapAfterSessionsClose(McpServer &mcp);

} // namespace cmcp
