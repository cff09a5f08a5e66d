#pragma once

#include <sys/types.h>

#include <optional>

class QTcpSocket;

namespace cmcp {

// The uid that owns the other end of a TCP connection made on this host (over loopback, in the
// same network namespace), as the kernel lists it in /proc/net/tcp or tcp6; none when the other
// end is not a socket of this host's namespace or cannot be found. A listener on loopback is
// open to every local user: this tells it who is calling, without the caller's cooperation.
std::optional<uid_t> loopbackPeerUid(const QTcpSocket &connection);

} // namespace cmcp
