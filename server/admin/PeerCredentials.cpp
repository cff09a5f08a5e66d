#include "admin/PeerCredentials.h"

#include "posix/ErrnoText.h"

#include <cerrno>
#include <sys/socket.h>

namespace cmcp {

std::optional<PeerCredentials> PeerCredentials::ofSocket(int fd, QString *error)
{
    ucred credentials{};
    socklen_t length = sizeof credentials;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        if (error)
            *error = QStringLiteral("SO_PEERCRED: %1").arg(errnoText(errno));
        return std::nullopt;
    }
    PeerCredentials peer;
    peer.pid = credentials.pid;
    peer.uid = credentials.uid;
    peer.gid = credentials.gid;
    // The kernel reports the groups the peer held when it connected (Linux 4.13 and later).
    gid_t groups[256];
    socklen_t groupsLength = sizeof groups;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &groupsLength) == 0) {
        for (socklen_t i = 0; i < groupsLength / sizeof(gid_t); ++i)
            peer.groups.append(groups[i]);
    }
    return peer;
}

QString refusalOf(const PeerCredentials &peer, uid_t daemonUid, std::optional<gid_t> adminGroup)
{
    if (peer.uid == 0 || peer.uid == daemonUid)
        return {};
    if (adminGroup && (peer.gid == *adminGroup || peer.groups.contains(*adminGroup)))
        return {};
    return adminGroup
            ? QStringLiteral("uid %1 (pid %2) is neither root, the daemon's uid %3 nor in group %4")
                      .arg(peer.uid)
                      .arg(peer.pid)
                      .arg(daemonUid)
                      .arg(*adminGroup)
            : QStringLiteral(
                      "uid %1 (pid %2) is neither root nor the daemon's uid %3 (no ADMIN_GROUP)")
                      .arg(peer.uid)
                      .arg(peer.pid)
                      .arg(daemonUid);
}

} // namespace cmcp
