#pragma once

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
    void release();
    // The uid must not serve another job (processes of it may have survived): it stays out of
    // the pool for the pool's lifetime.
    void retire();

private:
    friend class UidPool;
    UidLease(std::weak_ptr<UidPool> pool, uid_t uid, gid_t gid);

    std::weak_ptr<UidPool> m_pool;
    uid_t m_uid = 0;
    gid_t m_gid = 0;
    bool m_valid = false;
};

// The host uids jobs run as, base .. base + count - 1: each running job gets one no other
// running job has, so the kernel keeps jobs apart (signals, /proc, files) and every process of
// a uid belongs to one job. All jobs share one gid.
class UidPool : public std::enable_shared_from_this<UidPool>
{
public:
    static std::shared_ptr<UidPool> create(uid_t base, uid_t count, gid_t gid);

    // nullopt when every uid is in use.
    std::optional<UidLease> acquire();

    uid_t count() const { return uid_t(m_inUse.size()); }
    uid_t available() const { return m_available; }

private:
    friend class UidLease;
    UidPool(uid_t base, uid_t count, gid_t gid);
    void giveBack(uid_t uid);

    const uid_t m_base;
    const gid_t m_gid;
    std::vector<bool> m_inUse; // retired uids stay marked
    uid_t m_available;
    // Allocation goes round the pool rather than reusing the lowest free uid, so that a uid
    // comes back as late as possible: whatever a job left behind outside its workspace (files
    // in a shared /tmp) is reachable only by a later job with the same uid.
    uid_t m_next = 0;
};

} // namespace cmcp
