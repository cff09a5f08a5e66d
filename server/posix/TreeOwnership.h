#pragma once

#include <QString>

#include <functional>

#include <sys/types.h>

namespace cmcp {

// Gives the open directory `directoryFd` and everything below it whose owner `takesFrom`
// accepts to `owner` (the group is kept). Root runs this on trees jobs wrote, so it goes by
// descriptors only, as removeTreeAt does: every directory is opened relative to its parent
// without following a link or leaving the file system, and every entry is changed relative to
// the directory holding it without following it (a link itself changes owner, never what it
// names). A file with more than one name that root owns is left alone: its other name may lie
// outside the tree. Changing a file's owner clears its set-user-ID and set-group-ID bits.
//
// Directories nested deeper than a bound are left as they are (their files show as another
// user's to the jobs, nothing worse). False, with a reason naming the entry, when an entry that
// should change cannot; what could be changed is changed even then.
bool giveTreeTo(int directoryFd, uid_t owner, const std::function<bool(uid_t)> &takesFrom,
                QString *error);

} // namespace cmcp
