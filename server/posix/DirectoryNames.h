#pragma once

#include <QByteArray>
#include <QList>

namespace cmcp {

// The names in the open directory `dirFd`, "." and ".." left out, read through a copy of the
// descriptor (the caller's stays open and keeps its position). Empty with `error` set to the
// errno on failure, 0 otherwise.
QList<QByteArray> directoryNames(int dirFd, int *error);

} // namespace cmcp
