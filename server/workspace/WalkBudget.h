#pragma once

#include <QElapsedTimer>
#include <QString>

#include <chrono>

namespace cmcp {

// How much of a tree that a job can write the daemon walks in one go: how deep it goes, how many
// names it lists, how many bytes it reads and for how long. A hostile tree (a chain of 15,000
// directories, a million names in one directory, files that keep changing) then costs bounded
// time, memory and descriptors, and the walk says which bound it reached instead of running on.
class WalkBudget
{
public:
    struct Limits
    {
        // Directories deeper than this are not entered; a walk holds a descriptor per level.
        int maxDepth = 256;
        qint64 maxEntries = 1'000'000;
        qint64 maxBytes = qint64(1) << 30;
        std::chrono::milliseconds time = std::chrono::seconds(30);
    };

    // The bound a walk reached, the one that stopped it taking precedence over depth.
    enum class Bound { None, Depth, Entries, Bytes, Time };

    explicit WalkBudget(const Limits &limits);

    const Limits &limits() const { return m_limits; }

    // Whether a directory at `depth` (the top is 0) may be entered; false notes that part of the
    // tree was left out, and the walk goes on beside it.
    bool mayEnter(int depth);
    // Spend names listed or bytes read; false once the budget is spent, and the walk stops.
    bool spendEntries(qint64 count);
    qint64 entriesLeft() const
    {
        return m_entries < m_limits.maxEntries ? m_limits.maxEntries - m_entries : 0;
    }
    bool spendBytes(qint64 count);
    // False once the time is up, and the walk stops.
    bool inTime();

    // The walk must stop: entries, bytes or time spent.
    bool spent() const { return m_spent; }
    // Why the result is incomplete; empty when the whole tree was walked.
    const QString &shortfall() const { return m_shortfall; }
    Bound bound() const { return m_bound; }

private:
    bool spend(Bound bound, const QString &why);

    Limits m_limits;
    QElapsedTimer m_clock;
    qint64 m_entries = 0;
    qint64 m_bytes = 0;
    bool m_spent = false;
    QString m_shortfall;
    Bound m_bound = Bound::None;
};

} // namespace cmcp
