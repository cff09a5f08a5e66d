#include "workspace/BreadthFirstWalk.h"

#include "workspace/ContainedRoot.h"

#include <QFile>

#include <fcntl.h>

namespace cmcp {

BreadthFirstWalk::BreadthFirstWalk(const ContainedRoot &root, UniqueFd top,
                                   const WorkspacePath &topPath, WalkBudget &budget)
    : m_root(root),
      m_budget(budget),
      m_top(std::move(top)),
      m_topPath(topPath)
{
}

std::optional<BreadthFirstWalk::Directory> BreadthFirstWalk::next()
{
    while (!m_budget.spent() && m_budget.inTime()) {
        Directory directory;
        if (m_top.isValid()) {
            directory.fd = std::move(m_top);
            directory.path = m_topPath;
        } else if (!m_pending.empty()) {
            const Pending pending = std::move(m_pending.front());
            m_pending.pop_front();
            ContainedRoot::Opened opened =
                    m_root.openBeneath(pending.path, O_RDONLY | O_DIRECTORY | O_NONBLOCK, 0, false);
            if (!opened.ok())
                continue;
            directory.fd = std::move(opened.fd);
            directory.path = pending.path;
            directory.depth = pending.depth;
        } else {
            return std::nullopt;
        }
        // One name more than is left tells a directory that overdraws the budget: it is given
        // with the names that are left, and the walk ends after it.
        const qsizetype left = qsizetype(m_budget.entriesLeft());
        directory.entries = readDirectory(directory.fd.get(), left + 1);
        m_budget.spendEntries(directory.entries.size());
        if (directory.entries.size() > left)
            directory.entries.resize(left);
        return directory;
    }
    return std::nullopt;
}

void BreadthFirstWalk::enter(const Directory &directory, const DirectoryEntry &entry)
{
    if (S_ISDIR(entry.status.st_mode) && m_budget.mayEnter(directory.depth + 1))
        m_pending.push_back(
                {directory.path.child(QFile::decodeName(entry.name)), directory.depth + 1});
}

} // namespace cmcp
