// The HTTP request path before Qt's parser: the framing GuardedTcpServer applies to every byte a
// client sends (header end, Content-Length, chunked refusal, size limits), with the bytes cut
// into reads at fuzzed places, as TCP may deliver them.
#include "FuzzSupport.h"
#include "transport/RequestFraming.h"

#include <cstdint>

using namespace cmcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    // The first byte picks the body limit, the second the read size.
    const qint64 maxBody = qint64(data[0]) * 16;
    const qsizetype readSize = 1 + data[1] % 64;
    const QByteArray stream(reinterpret_cast<const char *>(data + 2), qsizetype(size - 2));

    RequestFraming pieces(maxBody);
    std::optional<RequestFraming::Refusal> refusal;
    for (qsizetype at = 0; at < stream.size() && !refusal; at += readSize)
        refusal =
                pieces.feed(QByteArrayView(stream).sliced(at, qMin(readSize, stream.size() - at)));
    RequestFraming whole(maxBody);
    const std::optional<RequestFraming::Refusal> wholeRefusal = whole.feed(stream);

    // However the bytes arrive, the verdict is the same.
    FUZZ_CHECK(refusal.has_value() == wholeRefusal.has_value());
    if (refusal) {
        FUZZ_CHECK(refusal->status == wholeRefusal->status);
        FUZZ_CHECK(refusal->status == 400 || refusal->status == 411 || refusal->status == 413
                   || refusal->status == 431);
        FUZZ_CHECK(pieces.refused() && !refusal->reason.isEmpty());
    } else {
        FUZZ_CHECK(pieces.bodyLeft() == whole.bodyLeft());
        FUZZ_CHECK(pieces.requestsComplete() == whole.requestsComplete());
        FUZZ_CHECK(pieces.bodyLeft() >= 0 && pieces.bodyLeft() <= maxBody);
        FUZZ_CHECK(pieces.headerBytes() <= RequestFraming::maxHeaderBytes);
    }
    return 0;
}
