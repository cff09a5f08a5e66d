#pragma once

#include "posix/UniqueFd.h"

#include <QObject>
#include <QString>

#include <functional>

namespace cmcp {

// Connects to 127.0.0.1:`port` inside the network namespace `netns` (a descriptor of
// /proc/<pid>/ns/net) without moving the daemon: a short-lived thread enters the namespace with
// setns(2), creates the socket and connects there, and ends. A socket keeps the namespace it was
// made in for its whole life, so the descriptor it hands back reaches that namespace's loopback
// from any thread of the daemon, and the daemon's own threads never change namespace.
//
// `done` runs on the application's thread (where `context` must live) with the connected
// descriptor, or an invalid one and why (nothing listens, the namespace cannot be entered); never
// when `context` is gone first (the descriptor is closed then). Needs CAP_SYS_ADMIN over the
// namespace's user namespace, which a daemon running as root has.
void connectInNamespace(int netns, quint16 port, QObject *context,
                        std::function<void(UniqueFd socket, const QString &error)> done);

} // namespace cmcp
