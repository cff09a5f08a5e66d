// The JSON-RPC/MCP payload parser: every byte string a client can POST or write to stdin.
#include "FuzzSupport.h"
#include "mcp/JsonRpc.h"

#include <QJsonArray>
#include <QJsonObject>

#include <cstdint>

using namespace cmcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    const jsonrpc::Payload payload = jsonrpc::parsePayload(bytes);
    if (payload.parseError) {
        FUZZ_CHECK(payload.messages.isEmpty());
        FUZZ_CHECK(!payload.parseErrorText.isEmpty());
        return 0;
    }
    for (const jsonrpc::Message &message : payload.messages) {
        switch (message.kind) {
        case jsonrpc::MessageKind::Request:
            FUZZ_CHECK(!message.method.isEmpty()
                       || message.object.contains(QLatin1String("method")));
            (void)jsonrpc::idKey(message.id);
            // What the server answers must itself parse as one valid response.
            {
                const QByteArray reply =
                        jsonrpc::serialize(jsonrpc::makeResult(message.id, QJsonObject{}));
                const jsonrpc::Payload again = jsonrpc::parsePayload(reply);
                FUZZ_CHECK(!again.parseError && again.messages.size() == 1);
                FUZZ_CHECK(again.messages.first().kind == jsonrpc::MessageKind::Response);
            }
            break;
        case jsonrpc::MessageKind::Invalid:
            FUZZ_CHECK(!message.invalidReason.isEmpty());
            (void)jsonrpc::serialize(jsonrpc::makeError(message.id, -32600, message.invalidReason));
            break;
        case jsonrpc::MessageKind::Notification:
        case jsonrpc::MessageKind::Response:
            break;
        }
    }
    return 0;
}
