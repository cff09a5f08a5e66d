#include "workspace/WalkBudget.h"

namespace cmcp {

WalkBudget::WalkBudget(const Limits &limits) : m_limits(limits)
{
    m_clock.start();
}

bool WalkBudget::mayEnter(int depth)
{
    if (depth <= m_limits.maxDepth)
        return true;
    if (m_bound == Bound::None) {
        m_bound = Bound::Depth;
        m_shortfall = QStringLiteral("directories more than %1 levels deep were left out")
                              .arg(m_limits.maxDepth);
    }
    return false;
}

bool WalkBudget::spendEntries(qint64 count)
{
    m_entries += count;
    return m_entries <= m_limits.maxEntries
            || spend(Bound::Entries,
                     QStringLiteral("stopped after %1 names").arg(m_limits.maxEntries));
}

bool WalkBudget::spendBytes(qint64 count)
{
    m_bytes += count;
    return m_bytes <= m_limits.maxBytes
            || spend(Bound::Bytes,
                     QStringLiteral("stopped after reading %1 MiB")
                             .arg(m_limits.maxBytes / (1024 * 1024)));
}

bool WalkBudget::inTime()
{
    return m_clock.elapsed() < m_limits.time.count()
            || spend(Bound::Time,
                     QStringLiteral("stopped after %1 s")
                             .arg(std::chrono::duration<double>(m_limits.time).count()));
}

bool WalkBudget::spend(Bound bound, const QString &why)
{
    if (!m_spent) {
        // The bound that stopped the walk says more than a note that a part was too deep.
        m_bound = bound;
        m_shortfall = why;
    }
    m_spent = true;
    return false;
}

} // namespace cmcp
