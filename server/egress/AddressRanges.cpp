#include "egress/AddressRanges.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

namespace cmcp {

namespace {

struct Ipv4Range
{
    quint32 base;
    int prefix;
    const char *text;
};

constexpr quint32 ipv4(int a, int b, int c, int d)
{
    return quint32(a) << 24 | quint32(b) << 16 | quint32(c) << 8 | quint32(d);
}

// IANA's IPv4 special-purpose registry, the ranges that are not globally reachable, plus
// multicast and the reserved 240/4 (which holds the broadcast address).
constexpr std::array ipv4Ranges{
        Ipv4Range{ipv4(0, 0, 0, 0), 8,
                  "0.0.0.0/8, \"this network\" (0.0.0.0 reaches the local host)"},
        Ipv4Range{ipv4(10, 0, 0, 0), 8, "10.0.0.0/8, private"},
        Ipv4Range{ipv4(100, 64, 0, 0), 10,
                  "100.64.0.0/10, shared address space (carrier-grade NAT)"},
        Ipv4Range{ipv4(127, 0, 0, 0), 8, "127.0.0.0/8, loopback"},
        Ipv4Range{ipv4(169, 254, 0, 0), 16, "169.254.0.0/16, link-local (cloud metadata services)"},
        Ipv4Range{ipv4(172, 16, 0, 0), 12, "172.16.0.0/12, private"},
        Ipv4Range{ipv4(192, 0, 0, 0), 24, "192.0.0.0/24, IETF protocol assignments"},
        Ipv4Range{ipv4(192, 0, 2, 0), 24, "192.0.2.0/24, documentation"},
        Ipv4Range{ipv4(192, 88, 99, 0), 24, "192.88.99.0/24, 6to4 relay anycast (deprecated)"},
        Ipv4Range{ipv4(192, 168, 0, 0), 16, "192.168.0.0/16, private"},
        Ipv4Range{ipv4(198, 18, 0, 0), 15, "198.18.0.0/15, benchmarking"},
        Ipv4Range{ipv4(198, 51, 100, 0), 24, "198.51.100.0/24, documentation"},
        Ipv4Range{ipv4(203, 0, 113, 0), 24, "203.0.113.0/24, documentation"},
        Ipv4Range{ipv4(224, 0, 0, 0), 4, "224.0.0.0/4, multicast"},
        Ipv4Range{ipv4(240, 0, 0, 0), 4, "240.0.0.0/4, reserved (255.255.255.255 is broadcast)"},
};

AddressRange classifyIpv4(quint32 address)
{
    for (const Ipv4Range &range : ipv4Ranges) {
        const quint32 mask = range.prefix == 0 ? 0 : ~quint32(0) << (32 - range.prefix);
        if ((address & mask) == range.base)
            return {false, QString::fromUtf8(range.text)};
    }
    return {};
}

struct Ipv6Range
{
    std::array<quint8, 16> base;
    int prefix;
    const char *text;
};

bool inRange(const Q_IPV6ADDR &address, const std::array<quint8, 16> &base, int prefix)
{
    const int wholeBytes = prefix / 8;
    if (std::memcmp(address.c, base.data(), size_t(wholeBytes)) != 0)
        return false;
    const int bits = prefix % 8;
    if (bits == 0)
        return true;
    const quint8 mask = quint8(0xff << (8 - bits));
    return (address.c[wholeBytes] & mask) == (base[size_t(wholeBytes)] & mask);
}

const std::array ipv6Ranges{
        Ipv6Range{{}, 128, "::/128, the unspecified address (reaches the local host)"},
        Ipv6Range{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, "::1/128, loopback"},
        Ipv6Range{{0x00, 0x64, 0xff, 0x9b, 0, 1}, 48, "64:ff9b:1::/48, local-use NAT64"},
        Ipv6Range{{0x01, 0x00}, 64, "100::/64, discard-only"},
        Ipv6Range{{0x20, 0x01, 0x0d, 0xb8}, 32, "2001:db8::/32, documentation"},
        Ipv6Range{{0x20, 0x01, 0x00, 0x10}, 28, "2001:10::/28, ORCHID (deprecated)"},
        Ipv6Range{{0xfc}, 7, "fc00::/7, unique local (private)"},
        Ipv6Range{{0xfe, 0x80}, 10, "fe80::/10, link-local"},
        Ipv6Range{{0xfe, 0xc0}, 10, "fec0::/10, site-local (deprecated, private)"},
        Ipv6Range{{0xff}, 8, "ff00::/8, multicast"},
};

quint32 ipv4At(const Q_IPV6ADDR &address, int offset)
{
    return quint32(address.c[offset]) << 24 | quint32(address.c[offset + 1]) << 16
            | quint32(address.c[offset + 2]) << 8 | quint32(address.c[offset + 3]);
}

// The IPv4 address an IPv6 address carries, where the network delivers it to that address.
std::optional<std::pair<quint32, const char *>> embeddedIpv4(const Q_IPV6ADDR &address)
{
    static const std::array<quint8, 16> mapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const std::array<quint8, 16> compatible{};
    static const std::array<quint8, 16> nat64{0x00, 0x64, 0xff, 0x9b};
    static const std::array<quint8, 16> sixToFour{0x20, 0x02};
    if (inRange(address, mapped, 96))
        return std::pair{ipv4At(address, 12), "an IPv4-mapped"};
    if (inRange(address, compatible, 96))
        return std::pair{ipv4At(address, 12), "an IPv4-compatible"};
    if (inRange(address, nat64, 96))
        return std::pair{ipv4At(address, 12), "a NAT64"};
    if (inRange(address, sixToFour, 16))
        return std::pair{ipv4At(address, 2), "a 6to4"};
    return std::nullopt;
}

} // namespace

AddressRange classifyAddress(const QHostAddress &address)
{
    if (address.protocol() == QAbstractSocket::IPv4Protocol)
        return classifyIpv4(address.toIPv4Address());
    if (address.protocol() != QAbstractSocket::IPv6Protocol)
        return {false, QStringLiteral("not an IP address")};
    const Q_IPV6ADDR v6 = address.toIPv6Address();
    for (const Ipv6Range &range : ipv6Ranges) {
        if (inRange(v6, range.base, range.prefix))
            return {false, QString::fromUtf8(range.text)};
    }
    if (const auto embedded = embeddedIpv4(v6)) {
        AddressRange inner = classifyIpv4(embedded->first);
        if (!inner.isPublic)
            inner.description =
                    QStringLiteral("%1, as %2 carried in %3 IPv6 address")
                            .arg(inner.description, QHostAddress(embedded->first).toString(),
                                 QString::fromUtf8(embedded->second));
        return inner;
    }
    return {};
}

} // namespace cmcp
