#include "daemon/GracefulDrain.h"

#include "mcp/McpServer.h"

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {
// How often the drain looks at the calls in flight: a call's end is seen this much later at
// most, which is nothing beside a shutdown.
constexpr int kPollMs = 20;
} // namespace

GracefulDrain::GracefulDrain(McpServer &mcp, int boundMs, std::function<qint64()> unsentBytes,
                             std::function<void()> quit, QObject *parent)
    : QObject(parent),
      m_mcp(mcp),
      m_boundMs(boundMs),
      m_unsentBytes(std::move(unsentBytes)),
      m_quit(std::move(quit))
{
    m_poll.setInterval(kPollMs);
    connect(&m_poll, &QTimer::timeout, this, &GracefulDrain::check);
}

void GracefulDrain::onSignal(int signal)
{
    if (m_mcp.isDraining()) {
        spdlog::warn("signal {} received again: stopping {} call(s) in flight now", signal,
                     m_mcp.callsInFlightCount());
        m_quit();
        return;
    }
    spdlog::info("signal {} received: draining — no new requests; {} call(s) in flight may "
                 "finish within {} ms (MCP_DRAIN_SECONDS)",
                 signal, m_mcp.callsInFlightCount(), m_boundMs);
    m_mcp.beginDraining();
    m_since.start();
    m_poll.start();
    check();
}

void GracefulDrain::check()
{
    const int running = m_mcp.callsInFlightCount();
    if (running == 0 && m_unsentBytes() == 0) {
        spdlog::info("drained in {} ms: shutting down", m_since.elapsed());
        m_poll.stop();
        m_quit();
        return;
    }
    if (m_since.hasExpired(m_boundMs)) {
        spdlog::warn("{} call(s) still in flight after MCP_DRAIN_SECONDS: stopping them", running);
        m_poll.stop();
        m_quit();
    }
}

} // namespace cmcp
