// A tunnel's first bytes, which a job or a page controls entirely, to tls::scanClientHello: the
// scan stays within its bound, says why it refuses, and a hello it accepts is judged the same
// however the bytes are cut into segments (every shorter cut of it asks for more).
#include "egress/tls/TlsClientHello.h"
#include "FuzzSupport.h"

#include <cstdint>

using namespace cmcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char *>(data), size);
    const tls::HelloScan scan = tls::scanClientHello(bytes);
    using Verdict = tls::HelloScan::Verdict;

    const tls::HelloScan again = tls::scanClientHello(bytes);
    FUZZ_CHECK(scan.verdict == again.verdict && scan.serverName == again.serverName
               && scan.problem == again.problem && scan.helloBytes == again.helloBytes);

    switch (scan.verdict) {
    case Verdict::NeedMore:
        // Never more than the bound: a client cannot make the proxy hold more.
        FUZZ_CHECK(scan.helloBytes > size && scan.helloBytes <= tls::kMaxHelloBytes);
        FUZZ_CHECK(scan.problem.empty() && !scan.serverName);
        break;
    case Verdict::NotTls:
        FUZZ_CHECK(size >= 1 && scan.problem.empty() && !scan.serverName);
        break;
    case Verdict::Refused:
        FUZZ_CHECK(!scan.problem.empty() && !scan.serverName);
        break;
    case Verdict::Hello: {
        FUZZ_CHECK(scan.problem.empty());
        FUZZ_CHECK(scan.helloBytes >= 5 + 4 && scan.helloBytes <= size
                   && scan.helloBytes <= tls::kMaxHelloBytes);
        if (scan.serverName) {
            FUZZ_CHECK(!scan.serverName->empty() && scan.serverName->size() <= 255);
            for (const char c : *scan.serverName)
                FUZZ_CHECK(std::uint8_t(c) > 0x20 && std::uint8_t(c) < 0x7f);
            // A name always matches itself, and never a granted host it does not spell.
            FUZZ_CHECK(tls::serverNameMismatch(scan.serverName, *scan.serverName, false).empty());
            FUZZ_CHECK(!tls::serverNameMismatch(scan.serverName, *scan.serverName + "x", false)
                                .empty());
        }
        // The hello alone is the same hello; cut shorter, it asks for more.
        const tls::HelloScan alone = tls::scanClientHello(bytes.substr(0, scan.helloBytes));
        FUZZ_CHECK(alone.verdict == Verdict::Hello && alone.serverName == scan.serverName);
        for (const std::size_t cut : {scan.helloBytes - 1, scan.helloBytes / 2, std::size_t(1)}) {
            const tls::HelloScan part = tls::scanClientHello(bytes.substr(0, cut));
            FUZZ_CHECK(part.verdict == Verdict::NeedMore && part.helloBytes > cut);
        }
        break;
    }
    }
    return 0;
}
