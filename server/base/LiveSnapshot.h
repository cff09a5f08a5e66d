#pragma once

#include <memory>
#include <mutex>

namespace cmcp {

// One policy that settings changed from the admin channel may replace while calls run. A call
// takes current() once, at its start, and keeps that snapshot to its end: a call already
// running finishes under the policy it began with, the next one sees the new policy. The
// snapshot is immutable, so worker threads read it without further locking; the mutex only
// guards the swap of the pointer (the event loop writes, workers read).
template<typename Policy>
class LiveSnapshot
{
public:
    explicit LiveSnapshot(std::shared_ptr<const Policy> initial = nullptr)
        : m_current(std::move(initial))
    {
    }

    std::shared_ptr<const Policy> current() const
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        return m_current;
    }

    void replace(std::shared_ptr<const Policy> next)
    {
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_current.swap(next);
        }
        // `next` now holds the previous snapshot; when no call holds it any more it is freed
        // here, outside the lock.
    }

private:
    mutable std::mutex m_mutex;
    std::shared_ptr<const Policy> m_current;
};

} // namespace cmcp
