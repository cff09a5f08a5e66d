#pragma once

#include <QJsonArray>
#include <QString>

namespace cmcp {

// What changed from one directory tree to another (a checkpoint and the workspace, or two
// checkpoints), walked by descriptors without following any link: each path added, removed, or
// modified (its type, mode, size, times or link target differ; a regular file whose size and
// mtime match but whose ctime differs is compared byte for byte), in path order. A modified
// text file (valid UTF-8, both sides at most `textDiffBytes`) comes with its unified diff.
struct TreeDifference
{
    QJsonArray changes; // [{"path", "change": "added"|"removed"|"modified", "diff"?}]
    bool truncated = false; // more than `maxChanges` changes: the rest are left out
};

// False with a reason when either directory cannot be opened.
bool diffTrees(const QString &before, const QString &after, int maxChanges, qint64 textDiffBytes,
               TreeDifference *difference, QString *error);

} // namespace cmcp
