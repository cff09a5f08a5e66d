#pragma once

#include "posix/UniqueFd.h"

#include <QtGlobal>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace cmcp::audit {

// The thread that runs the audit log's fdatasync off the event loop. The log asks for the records
// written so far to be synced (request); the thread syncs at once when idle, or right after the
// sync it is running when not, without waiting for the loop to hear of the first: under a disk
// whose fdatasync takes milliseconds, syncs follow each other back to back for as long as calls
// wait, and each covers every record written before it started.
class SyncThread
{
public:
    // Called on the thread after each sync with the seq it covers and its errno (0: synced).
    using Done = std::function<void(quint64 seq, int syncErrno)>;

    explicit SyncThread(Done done);
    // Waits for a sync in flight; no request is taken after.
    ~SyncThread();
    SyncThread(const SyncThread &) = delete;
    SyncThread &operator=(const SyncThread &) = delete;

    // The file the next syncs are of: a descriptor of its own, which a sync in flight keeps open
    // (the log may rotate its file meanwhile).
    void setFile(std::shared_ptr<UniqueFd> fd);
    // Every record up to `seq` is written: the next sync to start covers it.
    void request(quint64 seq);
    // fdatasync calls made so far.
    quint64 syncCount() const { return m_syncs.load(std::memory_order_relaxed); }

private:
    void run();

    const Done m_done;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    // Guarded by m_mutex:
    std::shared_ptr<UniqueFd> m_fd;
    quint64 m_requested = 0; // the highest seq asked for
    quint64 m_started = 0; // the seq the last sync started covers
    bool m_stopping = false;
    std::atomic<quint64> m_syncs{0};
    std::thread m_thread; // last: started once the members above exist
};

} // namespace cmcp::audit
