#pragma once

#include <QList>
#include <QString>

#include <optional>
#include <sys/types.h>

namespace cmcp {

// Who is at the other end of a local socket, as the kernel says (SO_PEERCRED, SO_PEERGROUPS):
// the credentials the peer had when it connected, which it cannot forge.
struct PeerCredentials
{
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    QList<gid_t> groups; // supplementary groups

    // nullopt (and why) when the kernel does not answer.
    static std::optional<PeerCredentials> ofSocket(int fd, QString *error);
};

// "" when the peer may use the admin channel: root, the daemon's own uid, or a member (primary
// or supplementary) of adminGroup when there is one. Otherwise the reason, for the log.
QString refusalOf(const PeerCredentials &peer, uid_t daemonUid, std::optional<gid_t> adminGroup);

} // namespace cmcp
