#pragma once

#include "posix/UniqueFd.h"

#include <QAbstractEventDispatcher>
#include <QVarLengthArray>

#include <atomic>
#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

class QSocketNotifier;

namespace cmcp {

// The event dispatcher of the daemon's main thread. Qt's own dispatchers (GLib's and the plain
// UNIX one) hand every socket notifier to poll() on each loop iteration, so with N idle streams
// open every wake-up costs O(N). This one keeps the notifiers in an epoll set, so a wake-up
// costs what is ready, and keeps the timers ordered by deadline, so arming and killing one
// costs O(log n) where Qt's list costs O(n).
//
// Qt switches a socket's notifiers on and off around its reads and writes, often more than
// once per loop iteration. The epoll registration follows them lazily: a change marks the
// descriptor, and the marked ones are brought up to date once, just before the next wait, so a
// notifier disabled and enabled again in between costs no system call. Only a descriptor's last
// notifier is removed at once, because its number may be reused before the next wait.
//
// Public Qt API only: sockets are activated with QEvent::SockAct and timers with QTimerEvent,
// both through QCoreApplication::sendEvent (which keeps Qt's scope counting for deleteLater
// right), and posted events are delivered with QCoreApplication::sendPostedEvents. User input
// does not exist in the daemon, so ExcludeUserInputEvents has nothing to exclude.
//
// Every method but wakeUp() and interrupt() belongs to the thread the dispatcher runs on.
class EpollEventDispatcher final : public QAbstractEventDispatcher
{
    Q_OBJECT

public:
    explicit EpollEventDispatcher(QObject *parent = nullptr);
    ~EpollEventDispatcher() override;

    bool processEvents(QEventLoop::ProcessEventsFlags flags) override;

    void registerSocketNotifier(QSocketNotifier *notifier) override;
    void unregisterSocketNotifier(QSocketNotifier *notifier) override;

    void registerTimer(int timerId, qint64 interval, Qt::TimerType timerType,
                       QObject *object) override;
    bool unregisterTimer(int timerId) override;
    bool unregisterTimers(QObject *object) override;
    QList<TimerInfo> registeredTimers(QObject *object) const override;
    int remainingTime(int timerId) override;

    void wakeUp() override;
    void interrupt() override;

    // How many epoll_ctl calls the dispatcher has made: what the unit test and the benchmarks
    // count the registration changes with.
    std::uint64_t registrationCalls() const { return m_registrationCalls; }

private:
    // The notifiers of one descriptor, by QSocketNotifier::Type, and the events its epoll
    // registration asks for (their union).
    struct Watched
    {
        QSocketNotifier *notifiers[3] = {nullptr, nullptr, nullptr};
        std::uint32_t events = 0;
        // Changed since the registration was last brought up to date (it is in m_changed).
        bool changed = false;
        // Its write notifier, just enabled, is activated once as if epoll had found the socket
        // writable (see m_presumedWritable); only if it stays enabled after that is EPOLLOUT
        // registered.
        bool presumedWritable = false;
        // epoll refuses regular files (stdin redirected from one); poll() reports them always
        // ready, and so does this dispatcher.
        bool alwaysReady = false;
    };

    struct Timer
    {
        QObject *object = nullptr;
        qint64 intervalMs = 0;
        Qt::TimerType type = Qt::CoarseTimer;
        // When it is due by its interval alone, and when it fires: later for a coarse timer,
        // which rounds its deadline so that timers share wake-ups.
        std::int64_t expectedNs = 0;
        std::int64_t deadlineNs = 0;
        // Which registration this is: a timer id killed and started again inside an event is a
        // new timer, and must not inherit the old one's state.
        std::uint64_t serial = 0;
        // Set while its QTimerEvent is being delivered, so that a nested event loop run by the
        // handler does not deliver it again.
        bool delivering = false;
    };

    void noteChange(int fd, Watched &watched);
    void applyRegistrationChanges();
    bool updateRegistration(int fd, Watched &watched);
    int epollControl(int operation, int fd, std::uint32_t events);
    int waitAndActivateSockets(int timeoutMs, bool includeSockets);
    int activateTimers();
    int timeoutForNextTimer(std::int64_t nowNs) const;
    std::int64_t firstDeadline(const Timer &timer, std::int64_t expectedNs) const;
    void forgetPending(QSocketNotifier *notifier);

    // Every descriptor with a notifier, and the eventfd that wakeUp() writes.
    UniqueFd m_epoll;
    // The eventfd alone: what processEvents() waits on when socket notifiers are excluded.
    UniqueFd m_wakeUpOnly;
    UniqueFd m_eventFd;
    std::atomic<bool> m_wakeUpPending{false};
    std::atomic<bool> m_interrupted{false};

    std::unordered_map<int, Watched> m_watched;
    // The descriptors whose notifiers changed since the last wait.
    std::vector<int> m_changed;
    // Write notifiers just enabled, to be activated after the next wait without asking epoll.
    // A socket's write notifier is enabled when there is something to send, and a socket
    // almost always has room for it: the write goes out on this activation and the notifier is
    // disabled again, so that a response costs no epoll_ctl at all where registering EPOLLOUT
    // and removing it cost two. A socket that had no room (the write would block) keeps its
    // notifier enabled, and then EPOLLOUT is registered. Readers of a notifier take a spurious
    // activation as a write that would block, as they must with poll() too.
    std::vector<std::pair<int, QSocketNotifier *>> m_presumedWritable;
    int m_alwaysReady = 0;
    std::uint64_t m_registrationCalls = 0;
    // The notifiers found ready and not yet activated, one list per processEvents() on the
    // stack (a handler may run a nested event loop); a notifier unregistered meanwhile is
    // blanked in all of them.
    using PendingList = QVarLengthArray<QSocketNotifier *, 64>;
    std::vector<PendingList *> m_pending;

    std::unordered_map<int, Timer> m_timers;
    std::set<std::pair<std::int64_t, int>> m_deadlines;
    std::unordered_multimap<QObject *, int> m_timersByObject;
    std::uint64_t m_nextSerial = 1;
};

} // namespace cmcp
