#include "sandbox/UidPool.h"

#include <algorithm>
#include <utility>

namespace cmcp {

UidLease::UidLease(std::weak_ptr<UidPool> pool, uid_t uid, gid_t gid, QString holder)
    : m_pool(std::move(pool)),
      m_holder(std::move(holder)),
      m_uid(uid),
      m_gid(gid),
      m_valid(true)
{
}

UidLease::UidLease(UidLease &&other) noexcept
    : m_pool(std::move(other.m_pool)),
      m_holder(std::move(other.m_holder)),
      m_uid(other.m_uid),
      m_gid(other.m_gid),
      m_valid(std::exchange(other.m_valid, false))
{
}

UidLease &UidLease::operator=(UidLease &&other) noexcept
{
    if (this != &other) {
        release();
        m_pool = std::move(other.m_pool);
        m_holder = std::move(other.m_holder);
        m_uid = other.m_uid;
        m_gid = other.m_gid;
        m_valid = std::exchange(other.m_valid, false);
    }
    return *this;
}

UidLease::~UidLease()
{
    release();
}

void UidLease::passTo(const QString &holder)
{
    if (!m_valid || holder == m_holder)
        return;
    if (const std::shared_ptr<UidPool> pool = m_pool.lock()) {
        pool->dropHeld(m_holder);
        pool->addHeld(holder);
    }
    m_holder = holder;
}

void UidLease::release()
{
    if (!std::exchange(m_valid, false))
        return;
    if (const std::shared_ptr<UidPool> pool = m_pool.lock())
        pool->giveBack(m_uid, m_holder);
}

void UidLease::retire()
{
    if (!std::exchange(m_valid, false))
        return;
    if (const std::shared_ptr<UidPool> pool = m_pool.lock())
        pool->dropHeld(m_holder);
}

std::shared_ptr<UidPool> UidPool::create(uid_t base, uid_t count, gid_t gid)
{
    return std::shared_ptr<UidPool>(new UidPool(base, count, gid));
}

UidPool::UidPool(uid_t base, uid_t count, gid_t gid)
    : m_base(base),
      m_gid(gid),
      m_inUse(count, false),
      m_available(count),
      m_reserve(reserveFor(count))
{
}

uid_t UidPool::reserveFor(uid_t count)
{
    return count < 2 ? 0 : std::max<uid_t>(1, count / 10);
}

std::optional<UidLease> UidPool::acquire(const QString &holder)
{
    const bool holdsNone = !holder.isEmpty() && heldBy(holder) == 0;
    if (!holdsNone && m_available <= m_reserve)
        return std::nullopt;
    const uid_t size = count();
    for (uid_t step = 0; step < size && m_available > 0; ++step) {
        const uid_t index = (m_next + step) % size;
        if (m_inUse[index])
            continue;
        m_inUse[index] = true;
        --m_available;
        m_next = (index + 1) % size;
        addHeld(holder);
        return UidLease(weak_from_this(), m_base + index, m_gid, holder);
    }
    return std::nullopt;
}

void UidPool::giveBack(uid_t uid, const QString &holder)
{
    const uid_t index = uid - m_base;
    if (index < count() && m_inUse[index]) {
        m_inUse[index] = false;
        ++m_available;
        dropHeld(holder);
    }
}

void UidPool::addHeld(const QString &holder)
{
    ++m_held[holder];
}

void UidPool::dropHeld(const QString &holder)
{
    const auto found = m_held.find(holder);
    if (found != m_held.end() && --*found == 0)
        m_held.erase(found);
}

} // namespace cmcp
