#pragma once

#include <QByteArray>
#include <QString>

#include <functional>

namespace cmcp {

// Where a removal stands, for tests that change the tree at exactly that moment.
enum class RemovalStep {
    Listed, // a directory's names were read; `name` is empty
    Descending, // about to open the subdirectory `name`
    Unlinking, // about to unlink `name` (a file, a link, or a directory just emptied)
};
using RemovalProbe = std::function<void(RemovalStep step, int directoryFd, const QByteArray &name)>;

// Removes the entry `name` of the open directory `parentFd`: a file, a symbolic link, or a
// directory with everything below it. Root removes trees that jobs and the browser worker can
// write, and they can swap any name for a symbolic link between two steps; a removal by path
// (QDir::removeRecursively) then follows the link and empties whatever it names on the host.
// This one goes by descriptors only: each directory is opened relative to its parent's
// descriptor, refusing links and mount points (O_NOFOLLOW, RESOLVE_NO_XDEV), and every name
// is unlinked relative to the directory that holds it, so whatever the tree turns into, the
// removal never leaves it. A link is removed, never followed; a hard link is one name less
// for its file, whose other names keep it.
//
// An entry that disappears meanwhile counts as removed. False, with a reason naming the
// entry, when something cannot be removed (a mount point is left in place, a directory that
// keeps filling up is given up on); what could be removed is gone even then.
bool removeTreeAt(int parentFd, const QByteArray &name, QString *error,
                  const RemovalProbe &probe = {});

// removeTreeAt on the last component of the absolute `path`, whose parent is opened by path:
// it must be a directory no untrusted user can change (SANDBOX_ROOT/sessions, which is root's
// and 0711; a root-owned temporary directory). True when `path` does not exist.
bool removeTree(const QString &path, QString *error);

// Removes every entry of the open directory `directoryFd` as removeTreeAt does, and keeps the
// directory itself.
bool removeTreeContents(int directoryFd, QString *error);

} // namespace cmcp
