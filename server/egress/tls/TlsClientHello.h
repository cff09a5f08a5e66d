#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cmcp::tls {

// The bytes the egress proxy reads, at most, for the ClientHello that opens a tunnel: one TLS
// record of the largest size TLS allows (2^14 bytes) and its header. A hello that needs more
// (a longer handshake message, or one cut into many small records) is refused, not followed.
constexpr std::size_t kMaxHelloBytes = 16 * 1024 + 5;

// What the first bytes of a tunnel say about its TLS server name. Plain C++ on raw bytes,
// strict and bounded: every length is checked against what is left and against the bound.
struct HelloScan
{
    enum class Verdict {
        // A TLS handshake has begun and the hello is not complete yet: read more.
        NeedMore,
        // The first bytes do not begin a TLS record: a plain protocol, left alone.
        NotTls,
        // A whole, well-formed ClientHello; serverName is its host_name, if it has one.
        Hello,
        // Malformed, larger than the bound, or a hello whose name cannot be checked
        // (encrypted); `problem` says which, in a sentence for a refusal message.
        Refused,
    };
    Verdict verdict = Verdict::NeedMore;
    std::optional<std::string> serverName;
    std::string problem;
    // With Hello: the bytes of the records that hold it (what the scan read). With NeedMore:
    // the bytes in all the scan needs before it can say more, so that a hello trickling in
    // byte by byte is scanned once per record, not once per byte.
    std::size_t helloBytes = 0;
};

// Scans the first bytes a client sent through a tunnel. Call again with more bytes while it
// answers NeedMore; it never answers NeedMore for more than `maxBytes` bytes.
//
// A tunnel is taken to speak TLS when its first byte is a handshake record (22); its first
// message must then be a ClientHello (in one record or several consecutive handshake records),
// whose extensions are walked for server_name (type 0), which must hold exactly one host_name
// of printable ASCII. A first record of another TLS content type (change_cipher_spec, alert,
// application_data, heartbeat) is refused: no server starts a connection with one, and it
// would only hide the hello behind it. So are a hello with the encrypted ClientHello
// extension (ECH, or the ESNI draft), whose real name the gate cannot read, an extension that
// appears twice, and bytes after the hello in its record.
HelloScan scanClientHello(std::string_view bytes, std::size_t maxBytes = kMaxHelloBytes);

// Why a hello's server name does not fit the tunnel granted for `grantedHost` (lower case
// ASCII, no trailing dot, an IP address in its canonical text when `grantedIsAddress`), or
// empty when it fits: no name at all; the same name, ASCII case and one trailing dot aside;
// for an address, no name or that address's text (RFC 6066 puts no address in server_name,
// and any other name would be fronting: a certificate and a site the gate never decided on).
std::string serverNameMismatch(const std::optional<std::string> &serverName,
                               std::string_view grantedHost, bool grantedIsAddress);

} // namespace cmcp::tls
