#pragma once

#include <QHash>
#include <QString>

#include <sys/types.h>

#include <memory>
#include <optional>
#include <vector>

namespace cmcp {

class UidPool;

// One host uid held by one job; given back to its pool when released or destroyed. A pool
// destroyed first simply forgets it.
class UidLease
{
public:
    UidLease() = default;
    UidLease(UidLease &&other) noexcept;
    UidLease &operator=(UidLease &&other) noexcept;
    UidLease(const UidLease &) = delete;
    UidLease &operator=(const UidLease &) = delete;
    ~UidLease();

    bool isValid() const { return m_valid; }
    uid_t uid() const { return m_uid; }
    gid_t gid() const { return m_gid; }
    // Whose the uid is: a principal's name, or empty for the server's own (UidPool::acquire).
    const QString &holder() const { return m_holder; }
    // The uid now counts as `holder`'s: a cell armed or a job started ahead of its call, taken
    // by a principal's call.
    void passTo(const QString &holder);
    void release();
    // The uid must not serve another job (processes of it may have survived): it stays out of
    // the pool for the pool's lifetime.
    void retire();

private:
    friend class UidPool;
    UidLease(std::weak_ptr<UidPool> pool, uid_t uid, gid_t gid, QString holder);

    std::weak_ptr<UidPool> m_pool;
    QString m_holder;
    uid_t m_uid = 0;
    gid_t m_gid = 0;
    bool m_valid = false;
};

// The host uids jobs run as, base .. base + count - 1: each running job gets one no other
// running job has, so the kernel keeps jobs apart (signals, /proc, files) and every process of
// a uid belongs to one job. All jobs share one gid.
//
// No principal can take the whole pool, whatever its caps on running jobs: the last tenth of
// the pool (reserve(), at least one uid) goes only to principals that hold no uid, one each.
// A principal that already holds one, and the server's own uses (templates, cells armed and
// jobs started ahead of their calls, which would otherwise hold the reserve for calls that
// never come), take a uid only while more than the reserve are free. So a principal is refused
// only when the pool is full with principals that hold none left to serve, never because
// one principal holds it all.
class UidPool : public std::enable_shared_from_this<UidPool>
{
public:
    static std::shared_ptr<UidPool> create(uid_t base, uid_t count, gid_t gid);

    // A uid for `holder` (a principal's name; empty: the server's own). nullopt when every uid
    // is in use, or when only the reserve is free and `holder` may not take from it.
    std::optional<UidLease> acquire(const QString &holder);

    uid_t count() const { return uid_t(m_inUse.size()); }
    uid_t available() const { return m_available; }
    // The uids kept for principals that hold none.
    uid_t reserve() const { return m_reserve; }
    // How many uids `holder` holds now.
    uid_t heldBy(const QString &holder) const { return m_held.value(holder); }
    // A tenth of `count`, at least one; none in a pool of one uid, which a reserve would close.
    static uid_t reserveFor(uid_t count);

private:
    friend class UidLease;
    UidPool(uid_t base, uid_t count, gid_t gid);
    void giveBack(uid_t uid, const QString &holder);
    void dropHeld(const QString &holder);
    void addHeld(const QString &holder);

    const uid_t m_base;
    const gid_t m_gid;
    std::vector<bool> m_inUse; // retired uids stay marked
    uid_t m_available;
    const uid_t m_reserve;
    QHash<QString, uid_t> m_held; // by holder; retired uids are no longer anyone's
    // Allocation goes round the pool rather than reusing the lowest free uid, so that a uid
    // comes back as late as possible: whatever a job left behind outside its workspace (files
    // in a shared /tmp) is reachable only by a later job with the same uid.
    uid_t m_next = 0;
};

} // namespace cmcp
