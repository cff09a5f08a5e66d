#include "CoreBench.h"

#include "McpMessages.h"

#include "conformance/fixtures/ConformanceFixtures.h"
#include "mcp/Exchange.h"
#include "mcp/JsonRpc.h"
#include "mcp/McpServer.h"

#include <memory>

namespace cmcp::bench {

namespace {

class NullChannel : public cmcp::SessionChannel
{
public:
    void sendUnrelated(const QJsonObject &) override { }
};

class SinkExchange : public cmcp::Exchange
{
public:
    explicit SinkExchange(QByteArray *sink) : m_sink(sink) { }
    void sendRelated(const QJsonObject &) override { }
    void complete(const QJsonValue &responses) override
    {
        if (!responses.isUndefined())
            *m_sink = cmcp::jsonrpc::serialize(responses);
    }

private:
    QByteArray *m_sink;
};

} // namespace

CoreRuns runCore(int n, int warmup, const Deadline &deadline)
{
    CoreRuns out;
    NullChannel channel;
    cmcp::McpServer mcp(cmcp::ServerIdentity{});
    cmcp::registerConformanceFixtures(mcp);
    const std::shared_ptr<cmcp::Session> session =
            mcp.openSession(QStringLiteral("bench"), &channel);
    QByteArray sink;
    auto feed = [&](const std::string &body) {
        sink.clear();
        return mcp.handlePayload(session,
                                 cmcp::jsonrpc::parsePayload(QByteArray::fromStdString(body)),
                                 std::make_shared<SinkExchange>(&sink));
    };
    feed(initializeBody);
    feed(initializedBody);
    if (!session->isInitialized()) {
        out.total.error = "in-process initialize failed";
        return out;
    }
    for (int i = 1; i <= warmup; ++i)
        feed(callBody(i));

    out.total.samples.reserve(size_t(n));
    out.parse.samples.reserve(size_t(n));
    out.dispatch.samples.reserve(size_t(n));
    for (long i = 1; i <= n && !deadline.passed(); ++i) {
        const QByteArray bytes = QByteArray::fromStdString(callBody(i));
        sink.clear();
        const auto t0 = Clock::now();
        const cmcp::jsonrpc::Payload payload = cmcp::jsonrpc::parsePayload(bytes);
        const auto t1 = Clock::now();
        mcp.handlePayload(session, payload, std::make_shared<SinkExchange>(&sink));
        const auto t2 = Clock::now();
        if (!callAnswered(sink.toStdString(), i)) {
            out.total.error = "in-process tools/call gave: " + sink.toStdString();
            break;
        }
        out.parse.samples.push_back(usBetween(t0, t1));
        out.dispatch.samples.push_back(usBetween(t1, t2));
        out.total.samples.push_back(usBetween(t0, t2));
    }
    out.ping.samples.reserve(size_t(n));
    for (long i = 1; i <= n && !deadline.passed(); ++i) {
        const QByteArray bytes = QByteArray::fromStdString(pingBody(i));
        sink.clear();
        const auto t0 = Clock::now();
        mcp.handlePayload(session, cmcp::jsonrpc::parsePayload(bytes),
                          std::make_shared<SinkExchange>(&sink));
        const auto t1 = Clock::now();
        if (!hasId(sink.toStdString(), i) || !sink.contains("\"result\"")) {
            out.ping.error = "in-process ping gave: " + sink.toStdString();
            break;
        }
        out.ping.samples.push_back(usBetween(t0, t1));
    }
    return out;
}

} // namespace cmcp::bench
