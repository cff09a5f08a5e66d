#pragma once

#include "posix/UniqueFd.h"

#include <QByteArray>
#include <QString>

#include <sys/types.h>

namespace cmcp {

// A directory the daemon keeps for itself beneath a directory of its own (SANDBOX_ROOT/spill,
// /templates, /transfers, /sessions): made with `mode` when missing, opened relative to
// `parentFd` without following a symbolic link (O_NOFOLLOW | O_DIRECTORY), checked to belong
// to this process's user, and given `mode` through the descriptor. Root then empties it, makes
// sockets in it, records paths in it: done by path, a symbolic link or someone else's directory
// planted at that name would turn each of these into a chmod or a deletion of whatever the
// plant names. Invalid, with `error` naming `shownPath` and the reason, when any step fails;
// nothing is changed then.
UniqueFd openOwnDirectoryAt(int parentFd, const QByteArray &name, mode_t mode,
                            const QString &shownPath, QString *error);

// openOwnDirectoryAt on the last component of the absolute `path`. Its parent is the
// operator's (SANDBOX_ROOT, or a directory the daemon made in it): made by path when missing
// and opened following links, as the operator set it.
UniqueFd openOwnDirectory(const QString &path, mode_t mode, QString *error);

} // namespace cmcp
