#pragma once

#include "posix/UniqueFd.h"
#include "workspace/DirectoryEntries.h"
#include "workspace/WalkBudget.h"
#include "workspace/WorkspacePath.h"

#include <deque>
#include <optional>

namespace cmcp {

class ContainedRoot;

// The directories of a workspace below one of them, level by level, for the file tools' walks
// (listing, search). Directories waiting their turn are kept as paths, not descriptors, and each
// is opened beneath the workspace root only when its turn comes: a job's tree of a million
// directories then costs the daemon one descriptor, not a million (a daemon out of descriptors
// fails every client). Names are never followed into links, nothing deeper than the budget's
// depth is entered, and every name listed is spent from the budget.
class BreadthFirstWalk
{
public:
    struct Directory
    {
        UniqueFd fd;
        WorkspacePath path;
        int depth = 0; // the top is 0
        QList<DirectoryEntry> entries;
    };

    // `top` is open already (the caller checked what it is); the budget outlives the walk.
    BreadthFirstWalk(const ContainedRoot &root, UniqueFd top, const WorkspacePath &topPath,
                     WalkBudget &budget);

    // The next directory with its entries in name order; none when every directory was seen or
    // the budget is spent. A directory that vanished or was swapped for a link meanwhile is
    // passed over; one with more names than the budget has left comes with as many as it has.
    std::optional<Directory> next();
    // Queues `entry` of `directory` (a directory itself, as listed) to be walked in its turn.
    void enter(const Directory &directory, const DirectoryEntry &entry);

private:
    struct Pending
    {
        WorkspacePath path;
        int depth = 0;
    };

    const ContainedRoot &m_root;
    WalkBudget &m_budget;
    UniqueFd m_top;
    WorkspacePath m_topPath;
    std::deque<Pending> m_pending;
};

} // namespace cmcp
