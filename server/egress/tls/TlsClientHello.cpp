#include "egress/tls/TlsClientHello.h"

#include <bitset>
#include <cstdint>

namespace cmcp::tls {

namespace {

// TLS content types (RFC 8446 5.1, RFC 6520) and the values of the hello that matter here.
constexpr std::uint8_t kChangeCipherSpec = 20;
constexpr std::uint8_t kAlert = 21;
constexpr std::uint8_t kHandshake = 22;
constexpr std::uint8_t kApplicationData = 23;
constexpr std::uint8_t kHeartbeat = 24;
constexpr std::uint8_t kClientHello = 1;
constexpr std::uint16_t kServerNameExtension = 0;
constexpr std::uint8_t kHostName = 0;
constexpr std::uint16_t kEncryptedClientHello = 0xfe0d; // ECH
constexpr std::uint16_t kEncryptedServerName = 0xffce; // the ESNI draft ECH replaced
constexpr std::size_t kRecordHeader = 5;
constexpr std::size_t kMaxRecordPayload = 16 * 1024; // 2^14, RFC 8446 5.1
constexpr std::size_t kMaxHostName = 255;

HelloScan refused(std::string problem)
{
    HelloScan scan;
    scan.verdict = HelloScan::Verdict::Refused;
    scan.problem = std::move(problem);
    return scan;
}

HelloScan needMore(std::size_t neededBytes)
{
    HelloScan scan;
    scan.helloBytes = neededBytes;
    return scan;
}

// Reads big-endian fields from a span, refusing to go past its end.
class Reader
{
public:
    explicit Reader(std::string_view bytes) : m_bytes(bytes) { }

    std::size_t left() const { return m_bytes.size(); }
    bool u8(std::uint8_t *value) { return number(1, value); }
    bool u16(std::uint16_t *value) { return number(2, value); }
    bool u24(std::uint32_t *value) { return number(3, value); }
    bool take(std::size_t count, std::string_view *part)
    {
        if (count > m_bytes.size())
            return false;
        *part = m_bytes.substr(0, count);
        m_bytes.remove_prefix(count);
        return true;
    }
    bool skip(std::size_t count)
    {
        std::string_view ignored;
        return take(count, &ignored);
    }

private:
    template<typename T>
    bool number(std::size_t count, T *value)
    {
        std::string_view part;
        if (!take(count, &part))
            return false;
        std::uint32_t result = 0;
        for (const char byte : part)
            result = (result << 8) | std::uint8_t(byte);
        *value = T(result);
        return true;
    }

    std::string_view m_bytes;
};

std::string number(unsigned value)
{
    return std::to_string(value);
}

// The server_name extension's body (RFC 6066 3): a list holding one host_name.
HelloScan readServerName(std::string_view body, HelloScan scan)
{
    Reader reader(body);
    std::uint16_t listLength = 0;
    if (!reader.u16(&listLength) || listLength != reader.left() || listLength == 0)
        return refused("its server_name extension has a wrong list length");
    std::optional<std::string> name;
    while (reader.left() > 0) {
        std::uint8_t type = 0;
        std::uint16_t length = 0;
        std::string_view text;
        if (!reader.u8(&type) || !reader.u16(&length) || !reader.take(length, &text))
            return refused("an entry of its server_name list runs past the list");
        if (type != kHostName)
            return refused("its server_name list has a name of type " + number(type)
                           + " (only host_name, 0, is defined)");
        if (name)
            return refused("its server_name list has several host names");
        if (text.empty() || text.size() > kMaxHostName)
            return refused("its server name is " + number(unsigned(text.size()))
                           + " bytes long (1 to 255 are allowed)");
        for (const char c : text)
            if (std::uint8_t(c) <= 0x20 || std::uint8_t(c) >= 0x7f)
                return refused("its server name has a byte (" + number(std::uint8_t(c))
                               + ") that is not printable ASCII");
        name = std::string(text);
    }
    scan.serverName = std::move(name);
    return scan;
}

// The ClientHello's body after its handshake header (RFC 8446 4.1.2, RFC 5246 7.4.1.2).
HelloScan readHelloBody(std::string_view body)
{
    Reader reader(body);
    std::uint8_t major = 0;
    std::uint8_t sessionIdLength = 0;
    std::uint16_t suitesLength = 0;
    std::uint8_t compressionLength = 0;
    if (!reader.u8(&major) || !reader.skip(1))
        return refused("its ClientHello is too short for a version");
    if (major != 3)
        return refused("its ClientHello has version " + number(major) + ".x, not 3.x");
    if (!reader.skip(32))
        return refused("its ClientHello is too short for a random");
    if (!reader.u8(&sessionIdLength) || sessionIdLength > 32 || !reader.skip(sessionIdLength))
        return refused("its ClientHello has a wrong session id length");
    if (!reader.u16(&suitesLength) || suitesLength < 2 || suitesLength % 2 != 0
        || !reader.skip(suitesLength))
        return refused("its ClientHello has a wrong cipher suites length");
    if (!reader.u8(&compressionLength) || compressionLength < 1 || !reader.skip(compressionLength))
        return refused("its ClientHello has a wrong compression methods length");

    HelloScan scan;
    scan.verdict = HelloScan::Verdict::Hello;
    if (reader.left() == 0)
        return scan; // no extensions (TLS 1.2 and older allow it): no name

    std::uint16_t extensionsLength = 0;
    if (!reader.u16(&extensionsLength) || extensionsLength != reader.left())
        return refused("its ClientHello's extensions length does not match the hello");
    // Two server_name extensions could show the gate one name and the server another.
    std::bitset<65536> seen;
    while (reader.left() > 0) {
        std::uint16_t type = 0;
        std::uint16_t length = 0;
        std::string_view data;
        if (!reader.u16(&type) || !reader.u16(&length) || !reader.take(length, &data))
            return refused("an extension of its ClientHello runs past the hello");
        if (seen.test(type))
            return refused("its ClientHello has extension " + number(type) + " twice");
        seen.set(type);
        if (type == kEncryptedClientHello || type == kEncryptedServerName)
            return refused("its ClientHello encrypts the server name (ECH), which the gate "
                           "cannot check");
        if (type == kServerNameExtension) {
            scan = readServerName(data, scan);
            if (scan.verdict == HelloScan::Verdict::Refused)
                return scan;
        }
    }
    return scan;
}

std::string contentTypeName(std::uint8_t type)
{
    switch (type) {
    case kChangeCipherSpec:
        return "change_cipher_spec";
    case kAlert:
        return "alert";
    case kApplicationData:
        return "application_data";
    case kHeartbeat:
        return "heartbeat";
    default:
        return number(type);
    }
}

bool isTlsContentType(std::uint8_t type)
{
    return type >= kChangeCipherSpec && type <= kHeartbeat;
}

char lowerAscii(char c)
{
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

std::string_view withoutTrailingDot(std::string_view name)
{
    if (!name.empty() && name.back() == '.')
        name.remove_suffix(1);
    return name;
}

bool sameName(std::string_view a, std::string_view b)
{
    a = withoutTrailingDot(a);
    b = withoutTrailingDot(b);
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lowerAscii(a[i]) != lowerAscii(b[i]))
            return false;
    return true;
}

} // namespace

HelloScan scanClientHello(std::string_view bytes, std::size_t maxBytes)
{
    if (bytes.empty())
        return needMore(1);
    const std::uint8_t first = std::uint8_t(bytes[0]);
    if (first != kHandshake) {
        // Another TLS record first would be refused by any server, or hide the hello behind
        // it; anything else is not TLS (the second byte tells: a TLS record says 3.x).
        if (!isTlsContentType(first))
            return {HelloScan::Verdict::NotTls, {}, {}, 0};
        if (bytes.size() < 2)
            return needMore(2);
        if (std::uint8_t(bytes[1]) != 3)
            return {HelloScan::Verdict::NotTls, {}, {}, 0};
        return refused("its first TLS record is " + contentTypeName(first)
                       + ", not a handshake with a ClientHello");
    }

    // The handshake message, gathered from consecutive handshake records.
    std::string message;
    std::size_t offset = 0;
    for (;;) {
        const std::string_view rest = bytes.substr(offset);
        if (rest.size() < kRecordHeader) {
            if (offset + kRecordHeader > maxBytes)
                return refused("its ClientHello is larger than " + number(unsigned(maxBytes))
                               + " bytes");
            // What there is of the header must still be a handshake record.
            if (!rest.empty() && std::uint8_t(rest[0]) != kHandshake)
                return refused("its ClientHello is cut by a record of type "
                               + contentTypeName(std::uint8_t(rest[0])));
            if (rest.size() >= 2 && std::uint8_t(rest[1]) != 3)
                return refused("its handshake record has version " + number(std::uint8_t(rest[1]))
                               + ".x, not 3.x");
            return needMore(offset + kRecordHeader);
        }
        Reader header(rest);
        std::uint8_t type = 0;
        std::uint8_t major = 0;
        std::uint16_t length = 0;
        header.u8(&type);
        header.u8(&major);
        header.skip(1);
        header.u16(&length);
        if (type != kHandshake)
            return refused("its ClientHello is cut by a record of type " + contentTypeName(type));
        if (major != 3)
            return refused("its handshake record has version " + number(major) + ".x, not 3.x");
        if (length == 0)
            return refused("it sent an empty handshake record");
        if (length > kMaxRecordPayload)
            return refused("its handshake record declares " + number(length)
                           + " bytes, more than TLS allows (16384)");
        if (offset + kRecordHeader + length > maxBytes)
            return refused("its ClientHello is larger than " + number(unsigned(maxBytes))
                           + " bytes");
        const std::string_view payload = rest.substr(kRecordHeader, length);
        // The handshake header can be judged before the record is whole.
        std::string_view known = payload;
        std::string joined;
        if (!message.empty()) {
            joined = message + std::string(payload);
            known = joined;
        }
        if (known.size() >= 4) {
            Reader handshake(known);
            std::uint8_t handshakeType = 0;
            std::uint32_t handshakeLength = 0;
            handshake.u8(&handshakeType);
            handshake.u24(&handshakeLength);
            if (handshakeType != kClientHello)
                return refused("its first handshake message is of type " + number(handshakeType)
                               + ", not a ClientHello");
            if (std::size_t(handshakeLength) + 4 + kRecordHeader > maxBytes)
                return refused("its ClientHello declares " + number(handshakeLength)
                               + " bytes, more than the " + number(unsigned(maxBytes))
                               + " the gate reads");
        }
        if (payload.size() < length)
            return needMore(offset + kRecordHeader + length);
        message.append(payload);
        offset += kRecordHeader + length;
        if (message.size() < 4)
            continue;
        const std::size_t needed = 4
                + ((std::size_t(std::uint8_t(message[1])) << 16)
                   | (std::size_t(std::uint8_t(message[2])) << 8) | std::uint8_t(message[3]));
        if (message.size() < needed)
            continue;
        if (message.size() > needed)
            return refused("its handshake record has bytes after the ClientHello");
        HelloScan scan = readHelloBody(std::string_view(message).substr(4));
        scan.helloBytes = offset;
        return scan;
    }
}

std::string serverNameMismatch(const std::optional<std::string> &serverName,
                               std::string_view grantedHost, bool grantedIsAddress)
{
    if (!serverName || sameName(*serverName, grantedHost))
        return {};
    if (grantedIsAddress)
        return "the tunnel was granted for the address " + std::string(grantedHost)
                + ", but its TLS ClientHello names '" + *serverName + "'";
    return "the tunnel was granted for " + std::string(grantedHost)
            + ", but its TLS ClientHello names '" + *serverName + "'";
}

} // namespace cmcp::tls
