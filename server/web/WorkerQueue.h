#pragma once

#include <QList>
#include <QtGlobal>

#include <algorithm>

namespace cmcp {

// The worker pools' queues of calls not yet given to a worker, each entry with its `id`:
// removes the entry of `id`; false when none is queued (it may be in a worker's hands).
template<typename Pending>
bool removeQueued(QList<Pending> &queue, quint64 id)
{
    const auto queued = std::find_if(queue.begin(), queue.end(),
                                     [id](const Pending &pending) { return pending.id == id; });
    if (queued == queue.end())
        return false;
    queue.erase(queued);
    return true;
}

} // namespace cmcp
