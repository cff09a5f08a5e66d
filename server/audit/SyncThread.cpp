#include "audit/SyncThread.h"

#include <cerrno>
#include <pthread.h>
#include <unistd.h>

namespace cmcp::audit {

SyncThread::SyncThread(Done done) : m_done(std::move(done)), m_thread([this] { run(); }) { }

SyncThread::~SyncThread()
{
    {
        const std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_one();
    m_thread.join();
}

void SyncThread::setFile(std::shared_ptr<UniqueFd> fd)
{
    const std::lock_guard lock(m_mutex);
    m_fd = std::move(fd);
}

void SyncThread::request(quint64 seq)
{
    {
        const std::lock_guard lock(m_mutex);
        if (seq <= m_requested)
            return;
        m_requested = seq;
    }
    // A system call only when the thread sleeps: glibc's notify_one finds no waiter otherwise.
    m_wake.notify_one();
}

void SyncThread::run()
{
    pthread_setname_np(pthread_self(), "audit sync");
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [this] { return m_stopping || m_requested > m_started; });
        if (m_stopping)
            return;
        const quint64 seq = m_requested;
        const std::shared_ptr<UniqueFd> fd = m_fd;
        m_started = seq;
        lock.unlock();
        m_syncs.fetch_add(1, std::memory_order_relaxed);
        int syncErrno = EBADF;
        if (fd && fd->isValid())
            syncErrno = ::fdatasync(fd->get()) == 0 ? 0 : errno;
        m_done(seq, syncErrno);
        lock.lock();
    }
}

} // namespace cmcp::audit
