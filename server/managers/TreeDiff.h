#pragma once

#include "workspace/WalkBudget.h"

#include <QJsonArray>
#include <QString>

namespace cmcp {

// What changed from one directory tree to another (a checkpoint and the workspace, or two
// checkpoints): each path added, removed, or modified (its type, mode, size, times or link
// target differ; a regular file whose size and mtime match but whose ctime differs is compared
// byte for byte), in path order. A modified text file (valid UTF-8, both sides at most
// `textDiffBytes`) comes with its unified diff.
struct TreeDifference
{
    QJsonArray changes; // [{"path", "change": "added"|"removed"|"modified", "diff"?}]
    bool truncated = false; // the rest of the changes are left out
    QString truncatedBecause; // why, when truncated
};

struct TreeDiffLimits
{
    int maxChanges = 1000;
    qint64 textDiffBytes = 256 * 1024;
    WalkBudget::Limits walk;
};

// Compares the trees below two open directories. A job may be changing the `after` tree while
// it is walked, so the walk trusts nothing it saw: it goes depth first without recursion, holds
// one descriptor per level and enters no directory deeper than the budget allows, opens every
// name relative to its directory without following links, opens a file it listed as regular
// with O_NONBLOCK (a FIFO swapped in cannot block it) and reads it only if it is still the
// inode it listed; it stops at `maxChanges` or when the budget is spent, saying so. Runs on any
// thread: it touches nothing but the two descriptors.
TreeDifference diffTrees(int beforeFd, int afterFd, const TreeDiffLimits &limits);

} // namespace cmcp
