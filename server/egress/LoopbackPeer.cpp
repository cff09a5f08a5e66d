#include "egress/LoopbackPeer.h"

#include <QHostAddress>
#include <QTcpSocket>

#include <netinet/in.h>

#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace cmcp {

namespace {

// An address as /proc/net/tcp{,6} writes it: the bytes of the address in memory order, as
// 32-bit words each printed in hexadecimal in the host's byte order, then ":" and the port.
std::string procNetEndpoint(const QHostAddress &address, quint16 port)
{
    std::string text;
    char word[16];
    bool v4 = false;
    const quint32 ipv4 = address.toIPv4Address(&v4);
    if (v4 && address.protocol() == QAbstractSocket::IPv4Protocol) {
        const quint32 network = htonl(ipv4);
        std::snprintf(word, sizeof word, "%08X", network);
        text = word;
    } else {
        const Q_IPV6ADDR bytes = address.toIPv6Address();
        for (int i = 0; i < 16; i += 4) {
            quint32 memoryOrder = 0;
            std::memcpy(&memoryOrder, bytes.c + i, 4);
            std::snprintf(word, sizeof word, "%08X", memoryOrder);
            text += word;
        }
    }
    std::snprintf(word, sizeof word, ":%04X", port);
    return text + word;
}

// The uid of the socket whose local end is `local` and remote end `remote` in `table`.
std::optional<uid_t> ownerIn(const char *table, const std::string &local, const std::string &remote)
{
    std::ifstream file(table);
    std::string line;
    std::getline(file, line); // the header
    while (std::getline(file, line)) {
        std::istringstream fields(line);
        std::string slot, localField, remoteField, state, queues, timer, retransmits;
        uid_t uid = 0;
        if (!(fields >> slot >> localField >> remoteField >> state >> queues >> timer >> retransmits
              >> uid))
            continue;
        if (localField == local && remoteField == remote)
            return uid;
    }
    return std::nullopt;
}

} // namespace

std::optional<uid_t> loopbackPeerUid(const QTcpSocket &connection)
{
    // The other end's socket has the peer's address as its local end and ours as its remote.
    const bool v6 = connection.localAddress().protocol() == QAbstractSocket::IPv6Protocol;
    const std::string theirs = procNetEndpoint(connection.peerAddress(), connection.peerPort());
    const std::string ours = procNetEndpoint(connection.localAddress(), connection.localPort());
    return ownerIn(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", theirs, ours);
}

} // namespace cmcp
