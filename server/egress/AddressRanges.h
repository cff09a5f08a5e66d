#pragma once

#include <QHostAddress>
#include <QString>

namespace cmcp {

// Where an address lies: public (globally routed), or the special-purpose range it belongs to.
// Addresses that embed an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96 and
// 6to4 2002::/16) are judged by the IPv4 address they carry: ::ffff:127.0.0.1 is loopback.
struct AddressRange
{
    bool isPublic = true;
    // For a non-public address: the range and what it is for, e.g.
    // "127.0.0.0/8, loopback" or "169.254.0.0/16, link-local (cloud metadata services)".
    QString description;
};

AddressRange classifyAddress(const QHostAddress &address);

} // namespace cmcp
